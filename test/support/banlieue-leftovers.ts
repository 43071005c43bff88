// What is left of banlieue's API in a control plane: its CRDs (with what keeps
// each from going, as the API server says in its conditions), and the objects
// of their kinds with their deletion timestamps, finalizers and conditions. A
// test waiting for an uninstall prints it when the wait times out, so a
// failure says what holds what.
import type { ControlPlane } from './control-plane.js';
import type { RoleProcess } from './controller-process.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The CRDs of banlieue's API groups (banlieue.io and its subgroups) still in the API server, by name. */
export async function banlieueCrds(cp: ControlPlane): Promise<Json[]> {
  const all = JSON.parse(await cp.kubectl(['get', 'crd', '-o', 'json'])) as { items: Json[] };
  return all.items.filter((crd) => /(^|\.)banlieue\.io$/.test(crd.spec?.group ?? ''));
}

const conditionsOf = (obj: Json): string =>
  ((obj.status?.conditions ?? []) as Json[])
    .map((c) => `${c.type}=${c.status}${c.reason ? ` ${c.reason}` : ''}${c.message ? `: ${String(c.message).slice(0, 300)}` : ''}`)
    .join('; ');

/** One line per CRD left, then one per object of its kind: name, deletion, finalizers, conditions. */
export async function describeBanlieueLeftovers(cp: ControlPlane): Promise<string> {
  const lines: string[] = [];
  for (const crd of await banlieueCrds(cp)) {
    const plural = `${crd.spec.names.plural as string}.${crd.spec.group as string}`;
    // Of a CRD's conditions, Terminating says what its deletion waits for; the others say it is served.
    const terminating = ((crd.status?.conditions ?? []) as Json[]).filter((c) => c.type === 'Terminating');
    lines.push(
      `CRD ${crd.metadata.name as string}${crd.metadata.deletionTimestamp ? ` deleting since ${crd.metadata.deletionTimestamp as string}` : ' not being deleted'}, finalizers [${((crd.metadata.finalizers ?? []) as string[]).join(', ')}]; ${conditionsOf({ status: { conditions: terminating } })}`,
    );
    let items: Json[];
    try {
      items = (JSON.parse(await cp.kubectl(['get', plural, '--all-namespaces', '-o', 'json'])) as { items: Json[] }).items;
    } catch (err) {
      lines.push(`  (listing ${plural} failed: ${String(err).slice(0, 300)})`);
      continue;
    }
    for (const o of items) {
      const name = o.metadata.namespace ? `${o.metadata.namespace as string}/${o.metadata.name as string}` : (o.metadata.name as string);
      lines.push(
        `  ${crd.spec.names.kind as string} ${name}${o.metadata.deletionTimestamp ? ` deleting since ${o.metadata.deletionTimestamp as string}` : ''}, finalizers [${((o.metadata.finalizers ?? []) as string[]).join(', ')}]; ${conditionsOf(o)}`,
      );
    }
  }
  return lines.length > 0 ? lines.join('\n') : 'no CRD of banlieue is left';
}

/**
 * What a role said lately: its failing watches, one line per informer (how many failures, the last
 * error), then its last `count` other lines, whatever their level (a pass repeating itself shows).
 */
export function describeRole(role: RoleProcess, count = 20): string {
  const failing = new Map<string, { times: number; last: string }>();
  const other: string[] = [];
  for (const line of role.logs().split('\n')) {
    if (line.trim() === '') continue;
    let entry: { msg?: string; informer?: string; err?: string } = {};
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      // Not JSON: a crash, kept as it is.
    }
    if (entry.msg === 'Watch failed, restarting' && entry.informer) {
      const seen = failing.get(entry.informer);
      failing.set(entry.informer, { times: (seen?.times ?? 0) + 1, last: String(entry.err ?? '').trim() });
    } else other.push(line.length > 600 ? `${line.slice(0, 600)}…` : line);
  }
  const watches = [...failing].map(([informer, { times, last }]) => `  watch of ${informer} failed ${times} times, last: ${last.slice(0, 200)}`);
  return [...watches, ...other.slice(-count).map((l) => `  ${l}`)].join('\n');
}
