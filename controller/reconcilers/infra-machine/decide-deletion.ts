// What deleting a machine does to its VM and its IPAddressClaims, and what the
// Events say of it (pure). spec.deletionPolicy Delete (the default) destroys
// the VM and deletes the claims, releasing their addresses; Retain lets the VM
// go as it is (the backend removes its ownership mark) and keeps the claims,
// their addresses still allocated to the VM that runs on. Either way, a VM
// that is not this machine's, or that no Provider reaches any more, is left
// alone (ADR 13, 16, 19).
import { DELETION_POLICIES, type DeletionPolicy } from '../../../infra/api/machine-fields.js';
import { Reason } from '../../../infra/api/conditions.js';

/** What became of the machine's VM in the deletion. */
export type VmFate =
  /** No VM of this machine is there: none found, or provably none created (`nothingCreated`: why, for the Event). */
  | { readonly kind: 'none'; readonly nothingCreated?: string }
  /** Destroyed with its disks (Delete). */
  | { readonly kind: 'destroyed' }
  /** Released (Retain): left as it is on the backend, without banlieue's mark. `ref`: its backend reference. */
  | { readonly kind: 'retained'; readonly ref: string; readonly provider: string }
  /** Left untouched, if there is one: not this machine's (VMNotOwned), or nothing reaches its backend (ProviderNotFound). */
  | { readonly kind: 'leftAlone'; readonly reason: typeof Reason.VMNotOwned | typeof Reason.ProviderNotFound; readonly message: string };

/** What became of the machine's IPAddressClaims: deleted (their addresses back to their pools) or kept. */
export interface ClaimsFate {
  readonly kept: boolean;
  readonly names: readonly string[];
}

export interface DeletionEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
}

/** The machine's spec.deletionPolicy; unset (or unknown to this version) is Delete. */
export function deletionPolicyOf(machine: { readonly spec: { readonly deletionPolicy?: string } }): DeletionPolicy {
  const policy = machine.spec.deletionPolicy;
  return DELETION_POLICIES.find((p) => p === policy) ?? 'Delete';
}

/** Ready's message from a deletion's first pass. */
export function deletingMessage(policy: DeletionPolicy, uuid: string | undefined): string {
  if (uuid === undefined) return 'deleting';
  return policy === 'Retain' ? `releasing the VM with UUID ${uuid}: deletionPolicy Retain leaves it on the backend` : `deleting the VM with UUID ${uuid}`;
}

/** Whether the claims outlive the machine: under Retain, while a VM may still run with their addresses. */
export function keepsClaims(policy: DeletionPolicy, fate: VmFate): boolean {
  return policy === 'Retain' && (fate.kind === 'retained' || fate.kind === 'leftAlone');
}

/** The Events that say what the deletion did to the VM and its claims. */
export function deletionEvents(fate: VmFate, uuid: string, claims: ClaimsFate): DeletionEvent[] {
  const kept =
    claims.kept && claims.names.length > 0
      ? `; its IPAddressClaims ${claims.names.join(', ')} are kept, their addresses still allocated (delete them once the VM no longer needs them)`
      : '';
  const released: DeletionEvent[] =
    !claims.kept && claims.names.length > 0
      ? [{ type: 'Normal', reason: Reason.IPAddressesReleased, message: `Deleted IPAddressClaims ${claims.names.join(', ')}` }]
      : [];
  switch (fate.kind) {
    case 'none':
      return [
        ...(fate.nothingCreated === undefined
          ? []
          : [
              {
                type: 'Normal' as const,
                reason: Reason.NothingCreated,
                message: `${fate.nothingCreated}; no VM was created for this machine, so none is deleted`,
              },
            ]),
        ...released,
      ];
    case 'destroyed':
      return [{ type: 'Normal', reason: 'Deleted', message: `Deleted the VM with UUID ${uuid}` }, ...released];
    case 'retained':
      return [
        {
          type: 'Normal',
          reason: Reason.VMRetained,
          message: `Retained VM ${fate.ref} (UUID ${uuid}) on Provider ${fate.provider} as it is (deletionPolicy Retain): its banlieue ownership mark is removed and banlieue no longer manages it${kept}`,
        },
        ...released,
      ];
    case 'leftAlone': {
      const left = fate.reason === Reason.VMNotOwned ? 'left on the backend' : `the VM (UUID ${uuid}), if any, is left on the backend`;
      return [{ type: 'Warning', reason: fate.reason, message: `${fate.message}; ${left}${kept}` }, ...released];
    }
  }
}
