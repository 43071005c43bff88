// The rendered user-data of a machine: spec.userDataSecretRef, else the
// owning CAPI Machine's bootstrap Secret (key `value`, CAPI bootstrap
// contract). Secrets are read by name only; the value never reaches logs,
// Events or status. The value is bytes, never decoded (it may be gzip).
import { Reason } from '../../../infra/api/conditions.js';
import { ApiStatusError } from '../../runtime/kube-api.js';
import type { ObjectReader } from '../../runtime/shared-reads.js';
import { readBinaryData } from '../../runtime/object-data.js';
import type { CapiMachine } from '../owning-machine.js';

export type UserDataResult =
  { readonly ok: true; readonly userData: Buffer | undefined } | { readonly ok: false; readonly reason: Reason; readonly message: string };

export interface UserDataSource {
  readonly metadata: { readonly namespace?: string };
  readonly spec: { readonly userDataSecretRef?: { readonly name: string; readonly key?: string } };
}

/**
 * @param capiMachine the owning CAPI Machine, when there is one that claims
 * this machine back (owning-machine.ts).
 * @param capiOwned whether an owner reference names a CAPI Machine, or CAPI
 * made the machine and its Machine is still to own it (awaitsCapiMachine):
 * without a Machine that claims it back, such a machine waits (it is never
 * booted without its bootstrap data, nor with another Machine's).
 */
export async function readUserData(
  api: ObjectReader,
  machine: UserDataSource,
  capiMachine: CapiMachine | undefined,
  capiOwned: boolean,
): Promise<UserDataResult> {
  const namespace = machine.metadata.namespace ?? '';
  const ref = machine.spec.userDataSecretRef;
  if (ref) return readKey(api, namespace, ref.name, ref.key ?? 'value', 'spec.userDataSecretRef');
  if (!capiMachine && capiOwned) {
    return {
      ok: false,
      reason: Reason.WaitingForBootstrapData,
      message:
        'no CAPI Machine owns this machine yet, or the owning Machine is gone, or it does not name this machine in spec.infrastructureRef (or its uid is not the owner reference’s)',
    };
  }
  if (!capiMachine) return { ok: true, userData: undefined };
  const name = capiMachine.spec?.bootstrap?.dataSecretName;
  if (!name) return { ok: false, reason: Reason.WaitingForBootstrapData, message: 'the owning Machine has no spec.bootstrap.dataSecretName yet' };
  return readKey(api, namespace, name, 'value', "the owning Machine's spec.bootstrap.dataSecretName");
}

async function readKey(api: ObjectReader, namespace: string, name: string, key: string, from: string): Promise<UserDataResult> {
  let data: Record<string, Buffer> | undefined;
  try {
    data = await readBinaryData(api, 'Secret', namespace, name);
  } catch (err) {
    // A host's identity reads a Secret once banlieue's controller lists it in the host-reads Role (ADR 29).
    if (err instanceof ApiStatusError && err.code === 403) {
      return {
        ok: false,
        reason: Reason.UserDataNotReadable,
        message: `this provider's identity may not read Secret ${name} (${from}) in namespace ${namespace}; a host may read only the user-data banlieue's controller lists for it, so check that the controller runs`,
      };
    }
    throw err;
  }
  if (!data) return { ok: false, reason: Reason.UserDataNotFound, message: `Secret ${name} (${from}) not found in namespace ${namespace}` };
  const value = data[key];
  if (value === undefined) return { ok: false, reason: Reason.UserDataNotFound, message: `Secret ${name} (${from}) has no key ${key}` };
  return { ok: true, userData: value };
}
