// The end state a fault run must reach, computed from what a user can see:
// the objects through the API server and the VMs in the backend. Pure.
// Identity is the BIOS UUID the machine's spec.providerID names: two backend
// VMs for one machine are a duplicate, a VM no remaining machine names is an orphan.

export interface FleetObject {
  readonly name: string;
  readonly uid: string;
  readonly deleting: boolean;
  readonly finalizers: readonly string[];
  readonly ready: boolean;
  /** A machine's spec.providerID, as written. */
  readonly providerID?: string;
  /** A machine's BIOS UUID (from spec.providerID), lower case. */
  readonly uuid?: string;
}

export interface BackendVm {
  readonly name: string;
  /** Lower case. */
  readonly uuid: string;
  /**
   * The backend's own id of this VM, one a re-creation changes even when the
   * UUID is the same (vSphere's managed object id, PVE's VMID and vmgenid, …);
   * undefined where the backend shows none for it.
   */
  readonly instance?: string;
}

export interface FleetExpectation {
  /** VirtualMachines that must exist and be Ready. */
  readonly kept: readonly string[];
  /** VirtualMachines that must be gone, with their machines and backend VMs. */
  readonly deleted: readonly string[];
}

export interface FleetReport {
  readonly expected: number;
  /** Kept machines with a backend VM of their UUID. */
  readonly found: number;
  /** Backend VMs beyond the first for one machine (same UUID, or same name with another UUID). */
  readonly duplicates: number;
  /** Backend VMs of the fleet that no kept machine names. */
  readonly orphans: number;
  /** Objects being deleted that still carry a finalizer. */
  readonly stuckFinalizers: number;
  /** Kept VirtualMachines not Ready (or missing). */
  readonly notReady: readonly string[];
  /** Deleted VirtualMachines or machines still present. */
  readonly notGone: readonly string[];
  /** What each non-zero count is made of, for the report. */
  readonly details: readonly string[];
}

export function checkFleet(
  expect: FleetExpectation,
  vms: readonly FleetObject[],
  machines: readonly FleetObject[],
  backend: readonly BackendVm[],
): FleetReport {
  const vmByName = new Map(vms.map((o) => [o.name, o]));
  const machineByName = new Map(machines.map((o) => [o.name, o]));
  const details: string[] = [];

  const notReady = expect.kept.filter((name) => !vmByName.get(name)?.ready);
  const notGone = expect.deleted.flatMap((name) => [
    ...(vmByName.has(name) ? [`VirtualMachine ${name}`] : []),
    ...(machineByName.has(name) ? [`machine ${name}`] : []),
  ]);
  const stuck = [...vms.map((o) => ['VirtualMachine', o] as const), ...machines.map((o) => ['machine', o] as const)].filter(
    ([, o]) => o.deleting && o.finalizers.length > 0,
  );
  for (const [kind, o] of stuck) details.push(`stuck finalizer: ${kind} ${o.name} (${o.finalizers.join(', ')})`);

  let found = 0;
  let duplicates = 0;
  const claimed = new Set<BackendVm>();
  for (const name of expect.kept) {
    const uuid = machineByName.get(name)?.uuid;
    const mine = backend.filter((vm) => (uuid !== undefined && vm.uuid === uuid) || vm.name === name);
    mine.forEach((vm) => claimed.add(vm));
    if (uuid !== undefined && mine.some((vm) => vm.uuid === uuid)) found += 1;
    if (mine.length > 1) {
      duplicates += mine.length - 1;
      details.push(`duplicate: ${name} has ${mine.length} VMs (${mine.map((vm) => `${vm.name} ${vm.uuid}`).join(', ')})`);
    }
  }
  const orphans = backend.filter((vm) => !claimed.has(vm));
  for (const vm of orphans) details.push(`orphan: VM ${vm.name} ${vm.uuid}`);
  if (notReady.length > 0) details.push(`not Ready: ${notReady.join(', ')}`);
  if (notGone.length > 0) details.push(`not gone: ${notGone.join(', ')}`);
  return { expected: expect.kept.length, found, duplicates, orphans: orphans.length, stuckFinalizers: stuck.length, notReady, notGone, details };
}
