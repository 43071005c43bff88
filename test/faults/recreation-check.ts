// Whether a fault run re-created a VM nobody asked to re-create: its backend
// VM destroyed and made again while its VirtualMachine was not being deleted.
// Judged from what a user can observe, check after check: each
// VirtualMachine's identity is taken when it is first seen Ready (its
// machine's metadata.uid and spec.providerID, and the backend's own id of the
// VM that providerID names), and every later check compares. Re-created is a
// machine with another uid (replaced), another spec.providerID, or a backend
// VM of that UUID gone or with another backend id. A VirtualMachine being
// deleted is not judged. Pure.
import type { BackendVm, FleetObject } from './fleet-check.js';

/**
 * What one check read. The backend is read first, then the machines, then the
 * VirtualMachines: a VirtualMachine read as not being deleted was not being
 * deleted when its backend VM was read either (a deletionTimestamp is never
 * taken back), so a VM found gone was not gone because it was asked to.
 */
export interface FleetObservation {
  readonly backend: readonly BackendVm[];
  readonly machines: readonly FleetObject[];
  readonly vms: readonly FleetObject[];
}

/** A VirtualMachine as it was first seen Ready. */
export interface VmIdentity {
  readonly vmUid: string;
  readonly machineUid: string;
  readonly providerID: string;
  /** The UUID spec.providerID names, lower case. */
  readonly uuid: string;
  /** The backend's ids (BackendVm.instance) of the VMs of that UUID then: more than one is a duplicate, counted apart. */
  readonly instances: readonly string[];
}

export interface RecreationState {
  /** By VirtualMachine name; taken again at its next Ready once a re-creation is seen. */
  readonly identities: ReadonlyMap<string, VmIdentity>;
  /** By VirtualMachine name: each change seen, with the check's time. */
  readonly recreated: ReadonlyMap<string, readonly string[]>;
  /** Every VirtualMachine whose identity was taken: the ones judged. */
  readonly watched: ReadonlySet<string>;
  /** Of those, the ones whose backend VM showed an id of its own (BackendVm.instance) when taken. */
  readonly watchedById: ReadonlySet<string>;
}

export interface RecreationReport {
  /** VirtualMachines whose backend VM was re-created at least once. */
  readonly recreated: number;
  /** VirtualMachines judged: seen Ready with their backend VM at least once. */
  readonly watched: number;
  /** Of those, judged by their backend VM's own id too (not by its UUID alone). */
  readonly watchedById: number;
  /** One line per change seen, for the report. */
  readonly details: readonly string[];
}

export const NO_RECREATION: RecreationState = { identities: new Map(), recreated: new Map(), watched: new Set(), watchedById: new Set() };

/** The state after one more check, made at `at` (a time that the replicas' logs can be searched by). */
export function checkRecreation(state: RecreationState, observation: FleetObservation, at: string): RecreationState {
  const identities = new Map(state.identities);
  const recreated = new Map(state.recreated);
  const watched = new Set(state.watched);
  const watchedById = new Set(state.watchedById);
  const machineByName = new Map(observation.machines.map((m) => [m.name, m]));
  for (const vm of observation.vms) {
    if (vm.deleting) continue;
    const machine = machineByName.get(vm.name);
    const known = identities.get(vm.name);
    if (known !== undefined && known.vmUid === vm.uid) {
      const changes = compareIdentity(
        known,
        machine,
        observation.backend.filter((b) => b.uuid === known.uuid),
      );
      if (changes.length === 0) continue;
      recreated.set(vm.name, [...(recreated.get(vm.name) ?? []), ...changes.map((change) => `${change} (at ${at})`)]);
      identities.delete(vm.name);
      continue;
    }
    const identity = identityOf(vm, machine, observation.backend);
    if (identity === undefined) continue;
    identities.set(vm.name, identity);
    watched.add(vm.name);
    if (identity.instances.length > 0) watchedById.add(vm.name);
  }
  return { identities, recreated, watched, watchedById };
}

export function toRecreationReport(state: RecreationState): RecreationReport {
  const details = [...state.recreated].flatMap(([name, changes]) => changes.map((change) => `recreated: ${name}: ${change}`));
  return { recreated: state.recreated.size, watched: state.watched.size, watchedById: state.watchedById.size, details };
}

/** The identity of a Ready VirtualMachine whose machine names a VM the backend holds; undefined before then. */
function identityOf(vm: FleetObject, machine: FleetObject | undefined, backend: readonly BackendVm[]): VmIdentity | undefined {
  if (!vm.ready || machine?.providerID === undefined || machine.uuid === undefined) return undefined;
  const uuid = machine.uuid;
  const mine = backend.filter((b) => b.uuid === uuid);
  if (mine.length === 0) return undefined;
  const instances = mine.flatMap((b) => (b.instance === undefined ? [] : [b.instance]));
  return { vmUid: vm.uid, machineUid: machine.uid, providerID: machine.providerID, uuid, instances };
}

/**
 * What changed since the identity was taken. A machine missing is not judged by itself (it may be
 * read between the old one's removal and the new one's creation): its uid is, once one is there,
 * and its backend VM is, whatever the machine.
 */
function compareIdentity(known: VmIdentity, machine: FleetObject | undefined, mine: readonly BackendVm[]): string[] {
  const changes: string[] = [];
  if (machine !== undefined && machine.uid !== known.machineUid) changes.push(`machine replaced (metadata.uid ${known.machineUid} → ${machine.uid})`);
  else if (machine !== undefined && machine.providerID !== known.providerID)
    changes.push(`machine spec.providerID changed (${known.providerID} → ${machine.providerID ?? 'none'})`);
  if (mine.length === 0) changes.push(`backend VM ${known.uuid} gone (was ${describeInstances(known.instances)})`);
  else if (known.instances.length > 0 && !mine.some((b) => b.instance !== undefined && known.instances.includes(b.instance))) {
    changes.push(
      `backend VM ${known.uuid} replaced (was ${describeInstances(known.instances)}, now ${describeInstances(mine.map((b) => b.instance ?? 'no id'))})`,
    );
  }
  return changes;
}

function describeInstances(instances: readonly string[]): string {
  return instances.length === 0 ? 'no backend id' : instances.join(', ');
}
