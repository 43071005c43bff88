// How a simulated handler refuses: the status and message PVE would send
// (the message goes into the status line, as pveproxy does), and for a 400
// the per-parameter `errors`.
export class PveHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly errors?: Readonly<Record<string, string>>,
  ) {
    super(message);
    this.name = 'PveHttpError';
  }
}

/** `raise_param_exc`: a 400 naming the parameters. */
export function paramError(errors: Readonly<Record<string, string>>): PveHttpError {
  return new PveHttpError(400, 'Parameter verification failed.', errors);
}

/** A handler's `die "…\n"`: PVE answers 500 with the text. */
export function failure(message: string): PveHttpError {
  return new PveHttpError(500, message);
}
