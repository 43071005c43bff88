// What `banlieue validate` says of one object, offline or from the API server.

export interface FieldError {
  /** Field path in kubectl style, e.g. spec.hardware.cpus; empty for the whole object. */
  readonly field: string;
  readonly message: string;
}

export interface Verdict {
  /** The file the object came from; `-` for stdin. */
  readonly file: string;
  /** Position of the object among the file's documents, from 0. */
  readonly index: number;
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  /** False when the API server would refuse the object. */
  readonly ok: boolean;
  readonly errors: readonly FieldError[];
  /**
   * CEL rules (x-kubernetes-validations) that apply to the object but were
   * not evaluated: offline without a CEL engine. `ok` then means "nothing
   * else is wrong", not "the API server accepts it".
   */
  readonly notCheckedOffline: readonly FieldError[];
}
