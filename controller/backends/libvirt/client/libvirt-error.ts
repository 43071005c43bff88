// libvirt's virError as a typed error. A reply with status ERROR carries a
// remote_error; its `code` (virErrorNumber, include/libvirt/virterror.h)
// decides the BackendError kind, its message is only ever shown, never matched.
import { BackendError, BackendErrorKind } from '../../backend-error.js';
import type { RemoteError } from './remote-types.js';

/** The virErrorNumber values this client names (virterror.h; append-only upstream). */
export const ErrorCode = {
  INTERNAL_ERROR: 1,
  NO_SUPPORT: 3,
  NO_CONNECT: 5,
  INVALID_CONN: 6,
  INVALID_ARG: 8,
  OPERATION_FAILED: 9,
  XML_ERROR: 27,
  DOM_EXIST: 28,
  OPERATION_DENIED: 29,
  SYSTEM_ERROR: 38,
  RPC: 39,
  GNUTLS_ERROR: 40,
  NO_DOMAIN: 42,
  NO_NETWORK: 43,
  AUTH_FAILED: 45,
  NO_STORAGE_POOL: 49,
  NO_STORAGE_VOL: 50,
  NO_NODE_DEVICE: 53,
  OPERATION_INVALID: 55,
  NO_INTERFACE: 57,
  NO_NWFILTER: 62,
  NO_SECRET: 66,
  CONFIG_UNSUPPORTED: 67,
  OPERATION_TIMEOUT: 68,
  NO_DOMAIN_SNAPSHOT: 72,
  ARGUMENT_UNSUPPORTED: 74,
  OPERATION_ABORTED: 78,
  AUTH_CANCELLED: 79,
  NO_DOMAIN_METADATA: 80,
  OPERATION_UNSUPPORTED: 84,
  SSH: 85,
  AGENT_UNRESPONSIVE: 86,
  RESOURCE_BUSY: 87,
  ACCESS_DENIED: 88,
  STORAGE_VOL_EXIST: 90,
  XML_INVALID_SCHEMA: 92,
  AUTH_UNAVAILABLE: 94,
  NO_DOMAIN_CHECKPOINT: 103,
  NO_NETWORK_PORT: 107,
} as const;

/** virErrorLevel. */
export const ErrorLevel = { None: 0, Warning: 1, Error: 2 } as const;

const NAME_BY_CODE = new Map<number, string>(Object.entries(ErrorCode).map(([name, code]) => [code, `VIR_ERR_${name}`]));

/**
 * Kind per code; codes not listed are Rejected: the daemon understood the call
 * and refused it (wrong state, bad XML, duplicate, unsupported flag).
 */
const KIND_BY_CODE: ReadonlyMap<number, BackendErrorKind> = new Map([
  [ErrorCode.NO_DOMAIN, BackendErrorKind.NotFound],
  [ErrorCode.NO_NETWORK, BackendErrorKind.NotFound],
  [ErrorCode.NO_STORAGE_POOL, BackendErrorKind.NotFound],
  [ErrorCode.NO_STORAGE_VOL, BackendErrorKind.NotFound],
  [ErrorCode.NO_NODE_DEVICE, BackendErrorKind.NotFound],
  [ErrorCode.NO_INTERFACE, BackendErrorKind.NotFound],
  [ErrorCode.NO_NWFILTER, BackendErrorKind.NotFound],
  [ErrorCode.NO_SECRET, BackendErrorKind.NotFound],
  [ErrorCode.NO_DOMAIN_SNAPSHOT, BackendErrorKind.NotFound],
  [ErrorCode.NO_DOMAIN_METADATA, BackendErrorKind.NotFound],
  [ErrorCode.NO_DOMAIN_CHECKPOINT, BackendErrorKind.NotFound],
  [ErrorCode.NO_NETWORK_PORT, BackendErrorKind.NotFound],
  [ErrorCode.AUTH_FAILED, BackendErrorKind.Unauthorized],
  [ErrorCode.AUTH_CANCELLED, BackendErrorKind.Unauthorized],
  [ErrorCode.AUTH_UNAVAILABLE, BackendErrorKind.Unauthorized],
  [ErrorCode.ACCESS_DENIED, BackendErrorKind.Unauthorized],
  [ErrorCode.OPERATION_DENIED, BackendErrorKind.Unauthorized],
  // The daemon or the guest could not do it now; nothing about the request is wrong.
  [ErrorCode.NO_CONNECT, BackendErrorKind.Unreachable],
  [ErrorCode.RPC, BackendErrorKind.Unreachable],
  [ErrorCode.OPERATION_TIMEOUT, BackendErrorKind.Unreachable],
  [ErrorCode.AGENT_UNRESPONSIVE, BackendErrorKind.Unreachable],
  [ErrorCode.RESOURCE_BUSY, BackendErrorKind.Unreachable],
]);

/** The kind a virErrorNumber maps to. */
export function kindOfErrorCode(code: number): BackendErrorKind {
  return KIND_BY_CODE.get(code) ?? BackendErrorKind.Rejected;
}

/** An error the daemon reported (a reply or stream packet with status ERROR). */
export class LibvirtError extends BackendError {
  /** The virErrorNumber, e.g. 42 (VIR_ERR_NO_DOMAIN); `code` holds its name. */
  readonly libvirtCode: number;
  /** The virErrorDomain: which part of libvirt raised it (12: the test driver, 10: QEMU…). */
  readonly libvirtDomain: number;
  /** virErrorLevel. */
  readonly level: number;
  /** libvirt's own message, without the procedure name. */
  readonly libvirtMessage: string;

  constructor(procedure: string, error: Pick<RemoteError, 'code' | 'domain' | 'level' | 'message'>) {
    const text = error.message ?? `libvirt error ${error.code}`;
    super(kindOfErrorCode(error.code), `${procedure}: ${text}`, { code: NAME_BY_CODE.get(error.code) ?? `VIR_ERR_${error.code}` });
    this.name = 'LibvirtError';
    this.libvirtCode = error.code;
    this.libvirtDomain = error.domain;
    this.level = error.level;
    this.libvirtMessage = text;
  }
}

/** True for a LibvirtError, with this virErrorNumber when given. */
export function isLibvirtError(error: unknown, code?: number): error is LibvirtError {
  return error instanceof LibvirtError && (code === undefined || error.libvirtCode === code);
}
