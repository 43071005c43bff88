// PVE API errors as typed errors. PVE answers a failed call with the message
// in the HTTP reason phrase ("400 Parameter verification failed.", "403
// Permission check failed (/vms/100, VM.Clone)", "500 Configuration file
// 'nodes/pve1/qemu-server/100.conf' does not exist") and a body of
// `{"data": null, "errors": {"<param>": "<why>"}}` for parameter errors; some
// versions add `message` to the body. The status decides the kind; only 500s,
// which PVE uses for every refusal raised in a handler, need the text (PVE has
// no error codes): the few patterns the provider acts on are listed below.
import { BackendError, BackendErrorKind } from '../../backend-error.js';

/** What PVE said, parsed from the status line and the body. */
export interface PveErrorBody {
  readonly status: number;
  /** Reason phrase or body `message`, trimmed; may be empty. */
  readonly message: string;
  /** Per-parameter errors of a 400 (`errors` in the body). */
  readonly fieldErrors: Readonly<Record<string, string>>;
}

/**
 * Patterns of 500 messages with a meaning of their own, as qemu-server and
 * pve-cluster word them. Checked in order; a 500 matching none is Unreachable
 * (lock timeouts, QMP timeouts, a node that went away: try again later).
 */
const MESSAGE_KINDS: readonly { readonly pattern: RegExp; readonly kind: BackendErrorKind; readonly code: string }[] = [
  // "Configuration file '…/100.conf' does not exist", "no such VM ('100')", "storage 'x' does not exist".
  { pattern: /does not exist|no such (vm|volume|storage|node|task)|not found/i, kind: BackendErrorKind.NotFound, code: 'DoesNotExist' },
  // "VM 105 already exists on node 'pve1'", "unable to create VM 105: config file already exists".
  { pattern: /already exists/i, kind: BackendErrorKind.Rejected, code: 'AlreadyExists' },
  // "VM 100 not running", "QEMU guest agent is not running", "VM 100 already running", "VM is locked (clone)".
  { pattern: /not running|already running|is locked|is a template|can't start a vm if it's a template/i, kind: BackendErrorKind.Rejected, code: 'WrongState' },
  // A config change made with a digest the config no longer has: someone else changed it.
  { pattern: /detected modified configuration/i, kind: BackendErrorKind.Rejected, code: 'ConfigChanged' },
  // "shrinking disks is not supported", "storage 'x' does not support vm images".
  { pattern: /not supported|does not support/i, kind: BackendErrorKind.Rejected, code: 'Unsupported' },
];

/** A PVE API call that got an error answer. */
export class ProxmoxError extends BackendError {
  readonly status: number;
  readonly fieldErrors: Readonly<Record<string, string>>;

  constructor(
    /** `METHOD /path/{template}` of the call. */
    readonly call: string,
    body: PveErrorBody,
  ) {
    const { kind, code } = classify(body);
    super(kind, describe(call, body), { code });
    this.name = 'ProxmoxError';
    this.status = body.status;
    this.fieldErrors = body.fieldErrors;
  }
}

/** True for a ProxmoxError, with this `code` when given (`AlreadyExists`, `HTTP401`…). */
export function isProxmoxError(error: unknown, code?: string): error is ProxmoxError {
  return error instanceof ProxmoxError && (code === undefined || error.code === code);
}

function classify(body: PveErrorBody): { kind: BackendErrorKind; code: string } {
  const { status, message } = body;
  if (status === 401) return { kind: BackendErrorKind.Unauthorized, code: 'AuthenticationFailed' };
  if (status === 403) return { kind: BackendErrorKind.Unauthorized, code: 'PermissionDenied' };
  if (status === 404) return { kind: BackendErrorKind.NotFound, code: 'DoesNotExist' };
  if (status === 400) return { kind: BackendErrorKind.Rejected, code: 'ParameterVerificationFailed' };
  // 501: the path or method does not exist on this PVE version.
  if (status === 501) return { kind: BackendErrorKind.Rejected, code: 'NotImplemented' };
  if (status >= 500) {
    const known = MESSAGE_KINDS.find((entry) => entry.pattern.test(message));
    return known ? { kind: known.kind, code: known.code } : { kind: BackendErrorKind.Unreachable, code: `HTTP${status}` };
  }
  return { kind: BackendErrorKind.Rejected, code: `HTTP${status}` };
}

/** `POST /nodes/{node}/qemu/{vmid}/clone: HTTP 400 Parameter verification failed.: newid: type check ('integer') failed - got 'x'`. */
function describe(call: string, body: PveErrorBody): string {
  const fields = Object.entries(body.fieldErrors).map(([name, why]) => `${name}: ${why.trim()}`);
  const head = `${call}: HTTP ${body.status}${body.message === '' ? '' : ` ${body.message}`}`;
  return fields.length === 0 ? head : `${head}: ${fields.join('; ')}`;
}
