// The VMM's error answers as typed errors. v53 answers an error with a JSON array of
// its error chain, outermost first (["Error from API", "The VM could not boot", "VM
// config is missing"]); older releases answered plain text; micro_http's own errors are
// `{ "error": "…" }`. All three are read into `chain`.
//
// The HTTP status decides the kind. It does not tell states apart (v53.0 answers 500 for
// "VM is not running" and for an I/O failure alike, where the spec says 405), so the
// innermost messages the VMM uses for its states are read into a `VmmErrorCode`, here
// and nowhere else.
import { BackendError, BackendErrorKind } from '../../backend-error.js';

/** What a VMM error is about, beside its kind. */
export const VmmErrorCode = {
  /** No VM was created in this VMM (or it was deleted). */
  VmNotCreated: 'VmNotCreated',
  /** The VM is created but not booted (or shut down), and the call needs it running. */
  VmNotRunning: 'VmNotRunning',
  /** vm.create or vm.boot on a VMM that already has one. */
  VmAlreadyCreated: 'VmAlreadyCreated',
  /** pause of a paused VM, resume of a running one. */
  InvalidStateTransition: 'InvalidStateTransition',
  /** The body was not a valid request (JSON or its types). */
  BadRequest: 'BadRequest',
  /** A CPU removal is still pending in the guest: vm.resize again later. */
  ResizePending: 'ResizePending',
  /** vmm.ping reported a version below the supported floor. */
  VmmVersionUnsupported: 'VmmVersionUnsupported',
  /** Anything else the VMM refused or failed at. */
  VmmError: 'VmmError',
} as const;
export type VmmErrorCode = (typeof VmmErrorCode)[keyof typeof VmmErrorCode];

// The VMM's own wording of its states (vmm/src/lib.rs, vmm/src/api/mod.rs at v53.0),
// matched against the innermost messages of the chain.
const CODE_BY_MESSAGE: readonly (readonly [RegExp, VmmErrorCode])[] = [
  [/^VM is not created$|^VM config is missing$/, VmmErrorCode.VmNotCreated],
  [/^VM is not running$/, VmmErrorCode.VmNotRunning],
  [/^VM is already created$/, VmmErrorCode.VmAlreadyCreated],
  [/InvalidStateTransition/, VmmErrorCode.InvalidStateTransition],
];

/** An answer of the VMM other than 2xx. */
export class VmmApiError extends BackendError {
  override readonly code: VmmErrorCode;

  constructor(
    /** e.g. `vm.boot`. */
    readonly operation: string,
    readonly status: number,
    /** The VMM's error chain, outermost first; empty when it sent no body. */
    readonly chain: readonly string[],
  ) {
    const code = codeOf(status, chain);
    super(kindOf(status), `${operation}: HTTP ${status}${chain.length > 0 ? `: ${chain.join(': ')}` : ''}`, { code });
    this.name = 'VmmApiError';
    this.code = code;
  }
}

/** True for a VmmApiError, of `code` when given. */
export function isVmmApiError(error: unknown, code?: VmmErrorCode): error is VmmApiError {
  return error instanceof VmmApiError && (code === undefined || error.code === code);
}

/** Reads an error body: a JSON array of strings (v53), `{ "error": … }` (micro_http) or plain text (older). */
export function errorChain(body: string): string[] {
  const text = body.trim();
  if (text === '') return [];
  try {
    const parsed: unknown = JSON.parse(text);
    if (Array.isArray(parsed) && parsed.every((item) => typeof item === 'string')) return parsed;
    if (typeof parsed === 'object' && parsed !== null && typeof (parsed as { error?: unknown }).error === 'string') {
      return [(parsed as { error: string }).error.trim()];
    }
  } catch {
    // micro_http writes its message into the JSON unescaped, newlines included (checked
    // with a POST against v53.0), so its object may not parse.
    const raw = /^\{\s*"error":\s*"([\s\S]*)"\s*\}$/.exec(text);
    if (raw?.[1] !== undefined) return [raw[1].trim()];
    // Otherwise: an older VMM's plain-text message.
  }
  return [text];
}

function kindOf(status: number): BackendErrorKind {
  if (status === 404) return BackendErrorKind.NotFound;
  // 429: "a cpu removal is still pending" (spec); the same call succeeds later.
  if (status === 429 || status === 503) return BackendErrorKind.Unreachable;
  // 500 is how v53 reports most refusals (wrong state, bad device id, bad config at boot).
  if (status >= 400 && status <= 500) return BackendErrorKind.Rejected;
  return BackendErrorKind.Unreachable;
}

function codeOf(status: number, chain: readonly string[]): VmmErrorCode {
  for (const message of [...chain].reverse()) {
    for (const [pattern, code] of CODE_BY_MESSAGE) if (pattern.test(message)) return code;
  }
  if (status === 400) return VmmErrorCode.BadRequest;
  if (status === 429) return VmmErrorCode.ResizePending;
  return VmmErrorCode.VmmError;
}
