// Where a VirtualMachine is placed, in three shapes (issue 10, Build 7):
// - Placement: where the scheduler would put it now;
// - RunningPlacement: where it runs, read from the infrastructure machine it
//   controls: the machine's backend (its kind), spec.providerRef and
//   spec.failureDomain, which the controller wrote by server-side apply, and
//   the class targets the machine carries, read back through its backend's
//   builder. This is the truth drift is judged against;
// - ScheduledPlacement: `status.scheduled`, the controller's record of the
//   running placement. Anyone allowed to write the status subresource can
//   change it, so no decision reads it: a record that disagrees with the
//   machine is rewritten from the machine, and nothing is moved because of it.
import type { ResolvedClass, ScheduledPlacement } from '../../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import type { Backend } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { BackendCatalog } from '../../backends/descriptor.js';
import type { Placement } from '../../scheduler/schedule.js';
import { toTimestamp } from '../../runtime/conditions.js';
import { buildInfraMachine, type InfraBuildInput, type InfraMachineObject } from './infra-builders.js';

export type { Placement } from '../../scheduler/schedule.js';

/** Where a VM runs, as the infrastructure machine it controls says. */
export interface RunningPlacement {
  readonly providerClass: Backend;
  readonly providerName: string;
  readonly failureDomain: string;
  /** Per class disk, read back from the machine; undefined when the machine does not carry them (see readResolvedClasses). */
  readonly resolvedStorage?: readonly ResolvedClass[];
  /** Per class interface, read back from the machine; undefined when the machine does not carry them. */
  readonly resolvedNetworks?: readonly ResolvedClass[];
}

/** `status.scheduled` for a placement chosen at `now`. */
export function toScheduledPlacement(placement: Placement, now: Date): ScheduledPlacement {
  return {
    providerName: placement.providerName,
    providerClass: placement.providerClass,
    failureDomain: placement.failureDomain.name,
    resolvedStorage: placement.resolvedStorage.map(copyResolved),
    resolvedNetworks: placement.resolvedNetworks.map(copyResolved),
    scheduledAt: toTimestamp(now),
  };
}

/**
 * Backend, Provider and failure domain of `machine`. A field another writer
 * removed reads as '' and so matches no fresh placement: such a machine is
 * judged like any other that no longer fits (the controller wrote both).
 */
export function runningPlacement(machine: InfraMachineObject, backends: BackendCatalog): RunningPlacement {
  const backend = backends.all.find((d) => d.api.machine.kind === machine.kind)?.api.name ?? '';
  return { providerClass: backend as Backend, providerName: machine.spec.providerRef?.name ?? '', failureDomain: machine.spec.failureDomain ?? '' };
}

/**
 * The class targets `live` carries, for a machine at `input.placement`'s
 * Provider and failure domain. Each backend writes targets into its own
 * fields (a vSphere datastore, a Proxmox bridge…), so they are found through
 * its builder: the machine is built once more with each target replaced by a
 * marker, and the live machine's value where a marker lands is the target it
 * carries. Markers go one per class entry; a backend that needs entries to
 * share a target (one datastore for every disk) refuses that, and then entries
 * sharing a fresh target share a marker. A list is returned only when every
 * marker was found with one value: a backend that resolves classes on its
 * host (its machine names classes, not targets) carries none, and nothing is
 * guessed.
 */
export function readResolvedClasses(
  live: InfraMachineObject,
  input: InfraBuildInput,
  backends: BackendCatalog,
): Pick<RunningPlacement, 'resolvedStorage' | 'resolvedNetworks'> {
  for (const share of [false, true]) {
    const storage = markers('storage', input.placement.resolvedStorage, share);
    const networks = markers('network', input.placement.resolvedNetworks, share);
    const probe = buildInfraMachine({ ...input, placement: { ...input.placement, resolvedStorage: storage.marked, resolvedNetworks: networks.marked } }, backends);
    if (!probe.ok) continue;
    const found = new Map<string, unknown[]>();
    collectAtMarkers(probe.object.spec, live.spec, found);
    const readStorage = storage.readBack(found);
    const readNetworks = networks.readBack(found);
    return { ...(readStorage ? { resolvedStorage: readStorage } : {}), ...(readNetworks ? { resolvedNetworks: readNetworks } : {}) };
  }
  return {};
}

/** Whether the record says what the machine says: Provider, backend, failure domain, and the targets the machine carries. */
export function recordAgrees(recorded: ScheduledPlacement | undefined, running: RunningPlacement): boolean {
  if (!recorded) return false;
  return (
    recorded.providerClass === running.providerClass &&
    recorded.providerName === running.providerName &&
    recorded.failureDomain === running.failureDomain &&
    (!running.resolvedStorage || sameResolved(recorded.resolvedStorage ?? [], running.resolvedStorage)) &&
    (!running.resolvedNetworks || sameResolved(recorded.resolvedNetworks ?? [], running.resolvedNetworks))
  );
}

/**
 * `status.scheduled` for a VM running at `running` on a machine made at
 * `since`: the record as it is when it agrees, else rewritten from the
 * machine (lists the machine does not carry are kept only from a record that
 * names the same Provider and failure domain).
 */
export function recordRunning(recorded: ScheduledPlacement | undefined, running: RunningPlacement, since: Date): ScheduledPlacement {
  if (recorded && recordAgrees(recorded, running)) return recorded;
  const samePlace = recorded?.providerClass === running.providerClass && recorded.providerName === running.providerName && recorded.failureDomain === running.failureDomain;
  const storage = running.resolvedStorage ?? (samePlace ? recorded.resolvedStorage : undefined);
  const networks = running.resolvedNetworks ?? (samePlace ? recorded.resolvedNetworks : undefined);
  return {
    providerName: running.providerName,
    providerClass: running.providerClass,
    failureDomain: running.failureDomain,
    ...(storage ? { resolvedStorage: storage.map(copyResolved) } : {}),
    ...(networks ? { resolvedNetworks: networks.map(copyResolved) } : {}),
    scheduledAt: toTimestamp(since),
  };
}

/** `provider/failure-domain`, as conditions and Events name a placement. */
export function describePlacement(p: { readonly providerName: string; readonly failureDomain: string | { readonly name: string } }): string {
  return `${p.providerName}/${typeof p.failureDomain === 'string' ? p.failureDomain : p.failureDomain.name}`;
}

/** Field by field: the API server returns an object's keys in its own order, so JSON text would differ. */
export function sameResolved(a: readonly ResolvedClass[], b: readonly ResolvedClass[]): boolean {
  return a.length === b.length && a.every((x, i) => x.className === b[i]?.className && x.backendId === b[i]?.backendId);
}

const copyResolved = (r: ResolvedClass): ResolvedClass => ({ className: r.className, backendId: r.backendId });

// NUL never occurs in a target a Provider publishes, so a marker cannot be mistaken for one.
const MARK = '\u0000';

interface Marked {
  readonly marked: ResolvedClass[];
  /** The list as the machine carries it, or undefined when a target was not found or found with two values. */
  readonly readBack: (found: ReadonlyMap<string, readonly unknown[]>) => ResolvedClass[] | undefined;
}

/** A marker per entry, or (`share`) per distinct target, entries sharing a target sharing its marker. */
function markers(list: string, resolved: readonly ResolvedClass[], share: boolean): Marked {
  const targets = [...new Set(resolved.map((r) => r.backendId))];
  const markerAt = (i: number): string => `${MARK}${list}${share ? targets.indexOf(resolved[i]?.backendId ?? '') : i}`;
  return {
    marked: resolved.map((r, i) => ({ className: r.className, backendId: markerAt(i) })),
    readBack: (found) => {
      const carried = resolved.map((_, i) => single(found.get(markerAt(i)) ?? []));
      if (carried.some((v) => v === undefined)) return undefined;
      return resolved.map((r, i) => ({ className: r.className, backendId: carried[i] ?? '' }));
    },
  };
}

/** Walks the probe and the live object together, collecting the live value wherever the probe holds a marker. */
function collectAtMarkers(probe: unknown, live: unknown, found: Map<string, unknown[]>): void {
  if (typeof probe === 'string') {
    if (probe.startsWith(MARK)) found.set(probe, [...(found.get(probe) ?? []), live]);
    return;
  }
  if (Array.isArray(probe)) {
    probe.forEach((p, i) => collectAtMarkers(p, Array.isArray(live) ? live[i] : undefined, found));
    return;
  }
  if (probe !== null && typeof probe === 'object') {
    const liveObject = live !== null && typeof live === 'object' && !Array.isArray(live) ? (live as Record<string, unknown>) : {};
    for (const [k, p] of Object.entries(probe)) collectAtMarkers(p, liveObject[k], found);
  }
}

/** The one string all `values` are; undefined when there are none, or they differ. */
function single(values: readonly unknown[]): string | undefined {
  const [first] = values;
  return typeof first === 'string' && values.every((v) => v === first) ? first : undefined;
}
