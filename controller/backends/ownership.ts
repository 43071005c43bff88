// Ownership before adoption (DESIGN §3, docs/adr/0016-ownership-marks.md): every
// VM a backend creates carries a mark naming the machine it belongs to, and a
// VM found by UUID is adopted, changed or destroyed only when its mark is this
// machine's: the machine recipe (kit/machine/) checks it on every pass, after
// every task and before every deletion or release. UUIDs can be copied into a
// spec by anyone who can see a VM; a mark can only be written by the provider
// that created the VM. The mark is kind, namespace and name: `clusterctl move`
// keeps all three (not the UID).
//
// A machine deleted with spec.deletionPolicy Retain releases its VM: the mark
// goes and the mark it had is left in its place as a note (`releasedFrom`),
// which nothing adopts by: it only lets a release that has to run again (its
// pass lost the finalizer write) know that the VM is already let go.
import { BackendError, BackendErrorKind } from './backend-error.js';

/** The machine object a VM belongs to. */
export interface MachineOwner {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
}

/** The mark a backend stores on the VM (vSphere extraConfig, domain metadata, a PVE tag…). */
export function ownerMark(owner: MachineOwner): string {
  return `${owner.kind}/${owner.namespace}/${owner.name}`;
}

/**
 * Throws NotOwned unless `found` (the mark read from the VM; undefined when it
 * has none) is `owner`'s. The message names the UUID and what the VM carries.
 */
export function assertOwnedBy(owner: MachineOwner, uuid: string, found: string | undefined): void {
  const mark = ownerMark(owner);
  if (found === mark) return;
  const carries = found === undefined || found === '' ? 'carries no banlieue ownership mark' : `belongs to ${found}`;
  throw new BackendError(
    BackendErrorKind.NotOwned,
    `the VM with UUID ${uuid} ${carries}, not to ${mark}: it is never adopted, changed or destroyed by this machine`,
  );
}

/** The marks read from a VM: its ownership mark, and the note a release left in its place. */
export interface VmMarks {
  readonly owner: string | undefined;
  readonly releasedFrom: string | undefined;
}

/**
 * What a release does with a VM's marks: `Unmark` when it carries `owner`'s mark, nothing
 * (`AlreadyReleased`) when `owner` released it before; throws NotOwned otherwise, as a destroy would.
 */
export function decideRelease(owner: MachineOwner, uuid: string, marks: VmMarks): 'Unmark' | 'AlreadyReleased' {
  const unmarked = marks.owner === undefined || marks.owner === '';
  if (unmarked && marks.releasedFrom === ownerMark(owner)) return 'AlreadyReleased';
  assertOwnedBy(owner, uuid, marks.owner);
  return 'Unmark';
}
