// What in the VM's namespace is the VM's, so that no Secret or machine is ever
// taken over: an object of the VM's name that it does not control (an
// infrastructure machine of another owner, a Secret `<vm>-user-data` that is
// not its rendered user-data) is reported and left alone, never written,
// deleted or referred to. Pure: decide.ts judges what it observed with these,
// reconciler.ts judges an object found in its place on create the same way.
import type { VirtualMachine } from '../../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import { Reason } from '../../../infra/api/conditions.js';
import { boundedName, LABEL_VALUE_MAX, OBJECT_NAME_MAX, sha256Hex } from '../../../infra/api/bounded-name.js';
import { API_VERSION, CORE_GROUP, type OwnerReference } from '../../../infra/api/kind.js';
import { Label, SecretType } from '../../../infra/api/well-known.js';
import { userDataBytes, type UserData } from '../../backends/user-data-bytes.js';
import type { InfraMachine } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/infra-machine.js';

/**
 * What one infrastructure kind holds under this VM's name. Unknown: it could
 * not be read. Foreign: an object this VM does not control; decide marks
 * Present and Terminating objects so, whatever the reconciler passed.
 */
export type InfraState =
  | { readonly kind: string; readonly state: 'Absent' | 'Unknown' }
  | { readonly kind: string; readonly state: 'Present' | 'Terminating' | 'Foreign'; readonly object: InfraMachine };

/** The Secret `<vm>-user-data`, read by name (the controller may not list or watch Secrets). */
export type RenderedSecretState = { readonly state: 'Absent' } | { readonly state: 'Present'; readonly secret: LiveSecret };

/** What the reconciler keeps of a live Secret: identity, ownership, type, and `data.value` (base64) to compare; no other data. */
export interface LiveSecret {
  readonly metadata: { readonly name?: string; readonly uid?: string; readonly ownerReferences?: readonly OwnerReference[] };
  readonly type?: string;
  readonly value?: string;
}

/** The rendered user-data Secret as the controller writes it; `metadata.uid` set: an update of that Secret, which is ours. */
export interface UserDataSecretObject {
  apiVersion: 'v1';
  kind: 'Secret';
  metadata: { name: string; namespace: string; uid?: string; labels: Record<string, string>; ownerReferences: OwnerReference[] };
  type: string;
  data: { value: string };
}

/** A write the apply step could not make because the object is not, or is no longer wholly, the VM's. */
export interface WriteConflict {
  readonly reason: typeof Reason.UserDataSecretConflict | typeof Reason.InfraMachineConflict | typeof Reason.CreateRefused;
  readonly message: string;
}

/** A create admission refused: reported on the VM, not only logged. */
export function createRefused(object: { readonly kind: string; readonly metadata: { readonly name?: string } }, apiMessage: string): WriteConflict {
  return { reason: Reason.CreateRefused, message: `${object.kind} ${object.metadata.name ?? ''} could not be created: ${apiMessage}` };
}

/** The user-data Secret write decided for `content`: none when the VM's own already holds it, or the conflict when the Secret of that name is not the VM's. */
export type UserDataSecretWrite = { readonly ok: true; readonly write?: UserDataSecretObject } | { readonly ok: false; readonly conflict: WriteConflict };

type Owned = { readonly metadata: { readonly ownerReferences?: readonly OwnerReference[] } };

/** `<vm>-user-data`; a VM's name may take all 253 characters a Secret's may have, so a longer one is cut with a hash. */
export const userDataSecretName = (vm: VirtualMachine): string => boundedName(`${vm.metadata.name ?? ''}-user-data`, OBJECT_NAME_MAX);

/**
 * The value of Label.ownedBy for the VM named `name`: the name itself when it
 * fits a label value. A name may run to 253 characters, which no label value
 * takes (the infra machine's create would be refused), so a longer one becomes
 * its start and a hash of the whole. The ownerReference carries the full name.
 */
export const ownedByLabelValue = (name: string): string => boundedName(name, LABEL_VALUE_MAX, sha256Hex(10));

/** Whether `vm` is the controller of `object`: an ownerReference with controller true and the VM's uid. */
export function isControlledBy(object: Owned, vm: VirtualMachine): boolean {
  const uid = vm.metadata.uid;
  return !!uid && (object.metadata.ownerReferences ?? []).some((r) => r.controller === true && r.uid === uid);
}

/** Present or Terminating objects the VM does not control become Foreign: never mirrored, replaced or deleted. */
export function markForeign(infra: readonly InfraState[], vm: VirtualMachine): InfraState[] {
  return infra.map((i): InfraState =>
    'object' in i && i.state !== 'Foreign' && !isControlledBy(i.object, vm) ? { kind: i.kind, state: 'Foreign', object: i.object } : i,
  );
}

/**
 * The conflict a Secret `<vm>-user-data` is unless it is the VM's rendered
 * user-data: banlieue's type (immutable, so set only at creation) and the VM
 * as controller. Undefined: it is the VM's.
 */
export function renderedSecretConflict(secret: LiveSecret, vm: VirtualMachine): WriteConflict | undefined {
  const type = secret.type ?? 'Opaque';
  const why =
    type !== SecretType.userData ? `its type is ${type}, not ${SecretType.userData}` : isControlledBy(secret, vm) ? undefined : controllerOf(secret, vm);
  if (!why) return undefined;
  return {
    reason: Reason.UserDataSecretConflict,
    message: `Secret ${userDataSecretName(vm)} exists and is not this VirtualMachine's rendered user-data (${why}); it is left untouched`,
  };
}

/** The conflict an infrastructure machine of the VM's name is unless the VM controls it. Undefined: it is the VM's. */
export function infraConflict(object: InfraMachine, vm: VirtualMachine): WriteConflict | undefined {
  if (isControlledBy(object, vm)) return undefined;
  return {
    reason: Reason.InfraMachineConflict,
    message: `${object.kind} ${object.metadata.name ?? ''} exists and is not controlled by this VirtualMachine (${controllerOf(object, vm)}); it is left untouched`,
  };
}

/** A write refused because another writer changed a field the controller sets in the VM's object (`apiMessage` names fields and managers, no values). */
export function fieldConflict(
  reason: WriteConflict['reason'],
  object: { readonly kind: string; readonly metadata: { readonly name?: string } },
  apiMessage: string,
): WriteConflict {
  return { reason, message: `${object.kind} ${object.metadata.name ?? ''} is not updated: another writer changed a field the controller sets (${apiMessage})` };
}

/** The Secret to write for `content` given what holds its name now (`live`, Absent when unset). */
export function decideUserDataSecretWrite(vm: VirtualMachine, live: RenderedSecretState | undefined, content: UserData): UserDataSecretWrite {
  const desired = toUserDataSecret(vm, content);
  if (!live || live.state === 'Absent') return { ok: true, write: desired };
  const conflict = renderedSecretConflict(live.secret, vm);
  if (conflict) return { ok: false, conflict };
  if (live.secret.value === desired.data.value) return { ok: true };
  return { ok: true, write: { ...desired, metadata: { ...desired.metadata, uid: live.secret.metadata.uid ?? '' } } };
}

/** The rendered user-data Secret of `vm`: banlieue's type, the VM as controller, so garbage collection removes it with the VM. */
export function toUserDataSecret(vm: VirtualMachine, content: UserData): UserDataSecretObject {
  const name = vm.metadata.name ?? '';
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: userDataSecretName(vm),
      namespace: vm.metadata.namespace ?? '',
      labels: { [Label.ownedBy]: ownedByLabelValue(name) },
      ownerReferences: [
        { apiVersion: `${CORE_GROUP}/${API_VERSION}`, kind: 'VirtualMachine', name, uid: vm.metadata.uid ?? '', controller: true, blockOwnerDeletion: true },
      ],
    },
    type: SecretType.userData,
    data: { value: userDataBytes(content).toString('base64') },
  };
}

/** Who controls an object the VM does not, in words. */
function controllerOf(object: Owned, vm: VirtualMachine): string {
  const controller = object.metadata.ownerReferences?.find((r) => r.controller === true);
  if (!controller) return 'it has no controller';
  const sameName = controller.kind === 'VirtualMachine' && controller.name === vm.metadata.name;
  return `it is controlled by ${controller.kind} ${controller.name}${sameName ? ` of uid ${controller.uid}, not this one` : ''}`;
}
