// banlieue's API writes, counted from the kube-apiserver audit log that
// ControlPlane keeps (writes only, one JSON event per line). Roles send
// User-Agent `banlieue/<version> (<role>)` (runtime/role-runner.ts), so the
// log tells the controller's writes from the provider's; the bench's own
// client, kube-controller-manager and the test admin are not counted. A
// process that is not banlieue's is counted by the user it runs as instead.
import { readFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';

const WRITE_VERBS = ['create', 'update', 'patch', 'delete'] as const;
type WriteVerb = (typeof WRITE_VERBS)[number];

/** One role's writes in a window, by verb; `failed` counts non-2xx answers (409 conflicts among them). */
export type RoleWrites = Record<WriteVerb, number> & {
  total: number;
  failed: number;
  /** Failed writes by `<verb> <resource> <code>`: where round trips go to waste. */
  failedBy: Record<string, number>;
  /** By resource, `virtualmachines/status` for a subresource. */
  byResource: Record<string, number>;
};

/** Writes by role (`controller`, `provider-vsphere`), or by user when counted so. */
export type WriteCounts = Record<string, RoleWrites>;

interface AuditEvent {
  stage?: string;
  verb?: string;
  userAgent?: string;
  user?: { username?: string };
  objectRef?: { resource?: string; subresource?: string; namespace?: string };
  responseStatus?: { code?: number };
}

const ROLE_AGENT = /^banlieue\/\S+ \(([^)]+)\)$/;

/** The byte offset after the last complete line: where a window starts or ends. */
export function auditOffset(path: string): number {
  return readFileSync(path).lastIndexOf(0x0a) + 1;
}

/**
 * banlieue's writes from offset `from` (to `to`, by default the end of the last complete line), in
 * `namespace` only when given (tests share one API server); with `users`, the writes of those
 * users, by user, instead of banlieue's by role.
 */
export function countWrites(
  path: string,
  from: number,
  { to = auditOffset(path), namespace, users }: { to?: number; namespace?: string; users?: readonly string[] } = {},
): WriteCounts {
  const counts: WriteCounts = {};
  for (const line of readFileSync(path).subarray(from, to).toString('utf8').split('\n')) {
    if (!line) continue;
    const event = JSON.parse(line) as AuditEvent;
    const verb = WRITE_VERBS.find((v) => v === event.verb);
    const username = event.user?.username ?? '';
    const role = users ? (users.includes(username) ? username : undefined) : ROLE_AGENT.exec(event.userAgent ?? '')?.[1];
    // ResponseComplete, once per request (ResponseStarted is only for watches).
    if (event.stage !== 'ResponseComplete' || !verb || !role) continue;
    if (namespace !== undefined && event.objectRef?.namespace !== namespace) continue;
    const writes = (counts[role] ??= { create: 0, update: 0, patch: 0, delete: 0, total: 0, failed: 0, failedBy: {}, byResource: {} });
    writes[verb] += 1;
    writes.total += 1;
    const code = event.responseStatus?.code ?? 0;
    const resource = [event.objectRef?.resource ?? '?', event.objectRef?.subresource].filter(Boolean).join('/');
    if (code < 200 || code >= 300) {
      writes.failed += 1;
      const what = `${verb} ${resource} ${code}`;
      writes.failedBy[what] = (writes.failedBy[what] ?? 0) + 1;
    }
    writes.byResource[resource] = (writes.byResource[resource] ?? 0) + 1;
  }
  return counts;
}

/**
 * Wait until banlieue has written nothing for `quietMs`, counting from `from`,
 * so that a window includes the status writes that trail the last Ready.
 * False when writes never stop within `timeoutMs`: writes at idle, reported, not fatal.
 * With `users`, those users' writes (countWrites).
 */
export async function untilWritesSettle(path: string, from: number, quietMs: number, timeoutMs: number, users?: readonly string[]): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  let last = -1;
  let lastChange = Date.now();
  while (Date.now() < deadline) {
    const total = Object.values(countWrites(path, from, users ? { users } : {})).reduce((sum, w) => sum + w.total, 0);
    if (total !== last) [last, lastChange] = [total, Date.now()];
    else if (Date.now() - lastChange >= quietMs) return true;
    await delay(250);
  }
  return false;
}
