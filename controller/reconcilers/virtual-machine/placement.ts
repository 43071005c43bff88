// Where a VirtualMachine is placed, in three shapes:
// - Placement: where the scheduler puts a new VM, or where a running VM's
//   machine is rebuilt (keptPlacement);
// - RunningPlacement: where it runs, read from the infrastructure machine it
//   controls: the machine's backend (its kind), spec.providerRef and
//   spec.failureDomain, which the controller wrote by server-side apply, and
//   the class targets the machine carries (its backend's carriedTargets).
//   This is the truth a running VM is judged by;
// - ScheduledPlacement: `status.scheduled`, the controller's record of the
//   running placement. Anyone allowed to write the status subresource can
//   change it, so no decision reads it: a record that disagrees with the
//   machine is rewritten from the machine, and nothing is moved because of it.
import { createHash } from 'node:crypto';
import type { FailureDomainStatus, Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { ResolvedClass, ScheduledPlacement, VirtualMachine } from '../../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import { type BackendName } from '../../../infra/api/backends.js';
import type { VMClass } from '../../../infra/api/banlieue.io/v1alpha1/vm-class.js';
import type { BackendCatalog } from '../../backends/descriptor.js';
import type { CarriedTargets } from '../../backends/machine-build.js';
import type { Placement } from '../../scheduler/schedule.js';
import { compareText } from '../../scheduler/compare-text.js';
import { resolveNetworks, resolveStorage } from '../../scheduler/resolve-class.js';
import { toTimestamp } from '../../runtime/conditions.js';
import type { InfraMachine } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/infra-machine.js';

export type { Placement } from '../../scheduler/schedule.js';

/** Where a VM runs, as the infrastructure machine it controls says. */
export interface RunningPlacement {
  readonly providerClass: BackendName;
  readonly providerName: string;
  readonly failureDomain: string;
  /** Per class disk, as the machine carries them; undefined when it carries none (its host resolves classes) or the class changed shape. */
  readonly resolvedStorage?: readonly ResolvedClass[];
  /** Per class interface, as the machine carries them; undefined likewise. */
  readonly resolvedNetworks?: readonly ResolvedClass[];
}

/** A running VM's machine rebuilt: where it runs, with the image it carries (undefined: as the VMImage says). */
export interface KeptPlacement {
  readonly placement: Placement;
  readonly imageRef?: string;
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
 * Backend, Provider and failure domain of `machine`, and (given its VMClass) the class targets it
 * carries. A field another writer removed reads as '': such a machine names no Provider, and is
 * judged like one whose Provider is gone (the controller wrote both).
 */
export function runningPlacement(machine: InfraMachine, backends: BackendCatalog, vmClass?: VMClass): RunningPlacement {
  const descriptor = backends.all.find((d) => d.api.machine.kind === machine.kind);
  const where: RunningPlacement = {
    providerClass: (descriptor?.api.name ?? '') as BackendName,
    providerName: machine.spec.providerRef?.name ?? '',
    failureDomain: machine.spec.failureDomain ?? '',
  };
  if (!descriptor || !vmClass) return where;
  const carried = descriptor.carriedTargets(machine.spec);
  const storage = zipNames(
    vmClass.spec.hardware.disks.map((d) => d.storageClass),
    carried.storage,
  );
  const networks = zipNames(
    vmClass.spec.network.interfaces.map((i) => i.networkClass),
    carried.networks,
  );
  return { ...where, ...(storage ? { resolvedStorage: storage } : {}), ...(networks ? { resolvedNetworks: networks } : {}) };
}

/**
 * The placement a running VM's machine is rebuilt with: where it runs, the failure domain's facts
 * as recorded when its VM was created (status.placement.location; else as published now), and
 * the image and class targets the machine carries, today's resolution filling only what it does
 * not carry. So a Provider or VMImage that now says otherwise changes nothing of a running VM.
 * Undefined when the facts are known neither way (a machine recorded by no location, in a failure
 * domain no longer published): the machine is then left as it is.
 */
export function keptPlacement(
  machine: InfraMachine,
  provider: Provider,
  published: FailureDomainStatus | undefined,
  vmClass: VMClass,
  backends: BackendCatalog,
): KeptPlacement | undefined {
  const running = runningPlacement(machine, backends);
  const descriptor = backends.get(running.providerClass);
  if (!descriptor) return undefined;
  const record = machine.status?.placement;
  const recorded = record?.provider === running.providerName && record.failureDomain === running.failureDomain ? record.location : undefined;
  const raw = recorded ?? published?.attributes?.raw;
  if (!raw && !published) return undefined;
  const failureDomain: FailureDomainStatus = { ...(published ?? { name: running.failureDomain }), attributes: { ...published?.attributes, raw: raw ?? {} } };
  const carried: CarriedTargets = descriptor.carriedTargets(machine.spec);
  const storage = resolveStorage(provider, vmClass.spec.hardware.disks, failureDomain);
  const networks = resolveNetworks(provider, vmClass.spec.network.interfaces, failureDomain);
  return {
    placement: {
      providerName: running.providerName,
      providerNamespace: provider.metadata.namespace ?? machine.metadata.namespace ?? '',
      providerClass: running.providerClass,
      failureDomain,
      resolvedStorage: storage.map((r, i) => ({ className: r.className, backendId: carried.storage?.[i] ?? r.backendId })),
      resolvedNetworks: networks.map((r, i) => ({ className: r.className, backendId: carried.networks?.[i] ?? r.backendId })),
    },
    ...(carried.imageRef !== undefined ? { imageRef: carried.imageRef } : {}),
  };
}

/**
 * A digest of spec.placement, which the machine carries (Annotation.placementSpec) from when the
 * VM was placed: a placement the user changed since is told apart from labels changed elsewhere.
 * Keys are sorted, so the API server's key order does not change it.
 */
export function placementSpecDigest(vm: VirtualMachine): string {
  return createHash('sha256')
    .update(canonicalJson(vm.spec.placement ?? {}))
    .digest('hex')
    .slice(0, 16);
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `{${entries
      .sort(([a], [b]) => compareText(a, b))
      .map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/** `names` paired with `targets`; undefined when there are no targets or not one per name. */
function zipNames(names: readonly string[], targets: readonly string[] | undefined): ResolvedClass[] | undefined {
  if (!targets || targets.length !== names.length) return undefined;
  return names.map((className, i) => ({ className, backendId: targets[i] ?? '' }));
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
  const samePlace =
    recorded?.providerClass === running.providerClass && recorded.providerName === running.providerName && recorded.failureDomain === running.failureDomain;
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
