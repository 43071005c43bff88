// "Never two writers", proved from the kube-apiserver audit log: every write
// a replica makes to a banlieue object must be received while that replica
// holds its role's Lease. Each replica authenticates as its own user, so the
// audit log names the writer; the Lease's holder at any instant is the
// replica whose write to the Lease last succeeded (an acquisition or a renewal).
// A write received before a failover and completed after it is in flight,
// not a second writer: only a fencing token could stop it, and the Lease has none.
import { readFileSync } from 'node:fs';

const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete']);
const BANLIEUE_GROUPS = new Set(['banlieue.io', 'infrastructure.banlieue.io']);

/** The fields of an audit event (audit.k8s.io/v1, level Metadata) this check reads. */
export interface AuditRecord {
  readonly stage?: string;
  readonly verb?: string;
  readonly user?: { readonly username?: string };
  readonly objectRef?: {
    readonly apiGroup?: string;
    readonly resource?: string;
    readonly namespace?: string;
    readonly name?: string;
    readonly subresource?: string;
  };
  readonly responseStatus?: { readonly code?: number };
  /** RFC 3339 with microseconds, fixed width: strings order as times do. */
  readonly requestReceivedTimestamp?: string;
  readonly stageTimestamp?: string;
}

export interface LeaseReplicas {
  readonly namespace: string;
  readonly lease: string;
  /** The users the role's replicas authenticate as (also their Lease identities). */
  readonly users: readonly string[];
}

/** A write to a banlieue object by a replica that did not hold its Lease when the write was received. */
export interface SecondWriter {
  readonly user: string;
  readonly holder: string | undefined;
  readonly at: string;
  readonly what: string;
}

export interface LeaseHistory {
  /** Changes of holder from one replica to another. */
  readonly failovers: number;
  readonly secondWriters: readonly SecondWriter[];
  /** Writes to banlieue objects by the role's replicas, checked. */
  readonly writesChecked: number;
}

/** The completed requests of an audit log, from byte `from` on. */
export function readAudit(path: string, from = 0): AuditRecord[] {
  return readFileSync(path)
    .subarray(from)
    .toString('utf8')
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as AuditRecord)
    .filter((e) => e.stage === 'ResponseComplete');
}

const succeeded = (e: AuditRecord): boolean => (e.responseStatus?.code ?? 0) >= 200 && (e.responseStatus?.code ?? 0) < 300;

/** Who held the Lease when, and which writes were made by a replica that did not hold it. Pure. */
export function checkLeaseWriters(events: readonly AuditRecord[], role: LeaseReplicas): LeaseHistory {
  const replicas = new Set(role.users);
  // A holder change takes effect when its write completed; a banlieue write counts from when it was received.
  const changes = events
    .filter(
      (e) =>
        WRITE_VERBS.has(e.verb ?? '') &&
        succeeded(e) &&
        e.objectRef?.resource === 'leases' &&
        e.objectRef.namespace === role.namespace &&
        e.objectRef.name === role.lease,
    )
    .map((e) => ({ at: e.stageTimestamp ?? '', holder: e.user?.username ?? '' }))
    .sort((a, b) => a.at.localeCompare(b.at));
  const writes = events
    .filter((e) => WRITE_VERBS.has(e.verb ?? '') && replicas.has(e.user?.username ?? '') && BANLIEUE_GROUPS.has(e.objectRef?.apiGroup ?? ''))
    .map((e) => ({ at: e.requestReceivedTimestamp ?? '', user: e.user?.username ?? '', what: describe(e) }))
    .sort((a, b) => a.at.localeCompare(b.at));

  let failovers = 0;
  for (let i = 1; i < changes.length; i++) if (changes[i]?.holder !== changes[i - 1]?.holder) failovers += 1;
  const secondWriters: SecondWriter[] = [];
  let next = 0;
  let holder: string | undefined;
  for (const write of writes) {
    while (next < changes.length && (changes[next]?.at ?? '') <= write.at) holder = changes[next++]?.holder;
    if (holder !== write.user) secondWriters.push({ user: write.user, holder, at: write.at, what: write.what });
  }
  return { failovers, secondWriters, writesChecked: writes.length };
}

function describe(e: AuditRecord): string {
  const ref = e.objectRef;
  const resource = [ref?.resource, ref?.subresource].filter(Boolean).join('/');
  return `${e.verb ?? '?'} ${resource} ${ref?.namespace ?? ''}/${ref?.name ?? ''} → ${e.responseStatus?.code ?? '?'}`;
}
