// The UUID a machine's VM is created with, and the providerID that carries it
// (DESIGN §3, docs/adr/0005-vm-identity-in-spec.md). spec.providerID wins:
// it survives `clusterctl move` (new UIDs) and a restart between "written"
// and "created". Without one, the UUID derives from the owning
// VirtualMachine's UID (what the controller offers the guest as
// ${PROVIDER_ID}), else from the machine's own UID (CAPI-owned machines).
import { CORE_GROUP } from '../../../infra/api/kind.js';
import { machineUuid } from '../machine-identity.js';

export interface IdentitySource {
  readonly metadata: {
    readonly uid?: string;
    readonly ownerReferences?: readonly { readonly apiVersion: string; readonly kind: string; readonly uid: string; readonly controller?: boolean }[];
  };
  readonly spec: { readonly providerID?: string };
}

export type MachineIdentity =
  | {
      readonly ok: true;
      readonly uuid: string;
      readonly providerID: string;
      /** Not yet in spec: write it before creating anything. */
      readonly unwritten: boolean;
      /**
       * The UUID is the one this machine derives (false after `clusterctl move`, which
       * keeps spec.providerID under a new UID, or for a hand-written one): a VM is then
       * only adopted, never created (ownership marks decide which VM is this machine's).
       */
      readonly derived: boolean;
    }
  | { readonly ok: false; readonly message: string };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** `providerIDScheme`: the backend's, e.g. vsphere. */
export function machineIdentity(providerIDScheme: string, machine: IdentitySource): MachineIdentity {
  const scheme = `${providerIDScheme}://`;
  const owner = machine.metadata.ownerReferences?.find((r) => r.controller && r.kind === 'VirtualMachine' && r.apiVersion.startsWith(`${CORE_GROUP}/`));
  const uid = owner?.uid ?? machine.metadata.uid;
  const derivedUuid = uid ? machineUuid(uid) : undefined;
  const existing = machine.spec.providerID;
  if (existing !== undefined) {
    const uuid = existing.startsWith(scheme) ? existing.slice(scheme.length).toLowerCase() : '';
    if (!UUID.test(uuid)) return { ok: false, message: `spec.providerID "${existing}" is not ${scheme}<UUID>` };
    return { ok: true, uuid, providerID: existing, unwritten: false, derived: uuid === derivedUuid };
  }
  if (!derivedUuid) return { ok: false, message: 'the machine has no metadata.uid' };
  return { ok: true, uuid: derivedUuid, providerID: `${scheme}${derivedUuid}`, unwritten: true, derived: true };
}
