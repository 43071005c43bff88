// The context every backend's builder starts from (controller/backends/machine-build.ts),
// resolved once from a placed VirtualMachine: hardware with overrides, NIC
// addressing, image reference, per-disk and per-NIC backend targets, metadata
// and the contract spec fields.
import type { VirtualMachine } from '../../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import type { VMClass } from '../../../infra/api/banlieue.io/v1alpha1/vm-class.js';
import type { VMImage } from '../../../infra/api/banlieue.io/v1alpha1/vm-image.js';
import { API_VERSION, CORE_GROUP, INFRA_GROUP } from '../../../infra/api/kind.js';
import { Annotation, Label } from '../../../infra/api/well-known.js';
import type { MachineBuildContext } from '../../backends/machine-build.js';
import { computeEffectiveHardware } from '../../scheduler/effective-hardware.js';
import { computeNicAddressing } from './nic-addressing.js';
import { ownedByLabelValue } from './ownership.js';
import { placementSpecDigest, type Placement } from './placement.js';

export interface InfraBuildInput {
  readonly vm: VirtualMachine;
  readonly vmClass: VMClass;
  readonly image: VMImage;
  readonly placement: Placement;
  /** Secret (VM namespace) holding the rendered user-data; no user-data when unset. */
  readonly userDataSecretName?: string;
  /** The image reference to write; unset: the VMImage's on the placement's Provider. A running VM keeps the one its machine carries. */
  readonly imageRef?: string;
  /** Annotation.placementSpec to write; unset: the digest of the VM's spec.placement. */
  readonly placementSpec?: string;
}

export type ContextResult = { readonly ok: true; readonly context: MachineBuildContext } | { readonly ok: false; readonly message: string };

export function resolveBuildContext(input: InfraBuildInput): ContextResult {
  const { vm, vmClass, image, placement } = input;
  const { name, namespace, uid } = vm.metadata;
  if (!name || !namespace || !uid) return fail('VirtualMachine metadata lacks name, namespace or uid');
  const hw = computeEffectiveHardware(vm, vmClass);
  if (!hw.ok) return fail(hw.error.message);
  const addressing = computeNicAddressing(vm, vmClass);
  if (!addressing.ok) return fail(addressing.message);
  const interfaces = vmClass.spec.network.interfaces;
  if (placement.resolvedStorage.length !== hw.hardware.disks.length) {
    return fail(`placement resolved ${placement.resolvedStorage.length} storage classes for ${hw.hardware.disks.length} class disks`);
  }
  if (placement.resolvedNetworks.length !== interfaces.length) {
    return fail(`placement resolved ${placement.resolvedNetworks.length} network classes for ${interfaces.length} class interfaces`);
  }
  const imageRef = input.imageRef ?? resolveImageRef(image, placement);
  if (imageRef === undefined) {
    return fail(`VMImage "${image.metadata.name ?? ''}" has no source for providerClass ${placement.providerClass}`);
  }
  return {
    ok: true,
    context: {
      input,
      apiVersion: `${INFRA_GROUP}/${API_VERSION}`,
      metadata: {
        name,
        namespace,
        labels: { ...vm.metadata.labels, [Label.ownedBy]: ownedByLabelValue(name) },
        annotations: { [Annotation.placementSpec]: input.placementSpec ?? placementSpecDigest(vm) },
        ownerReferences: [{ apiVersion: `${CORE_GROUP}/${API_VERSION}`, kind: 'VirtualMachine', name, uid, controller: true, blockOwnerDeletion: true }],
      },
      commonSpec: {
        providerRef: { name: placement.providerName },
        failureDomain: placement.failureDomain.name,
        desiredPowerState: vm.spec.desiredPowerState ?? 'PoweredOn',
        ...(vm.spec.restartRequestedAt !== undefined ? { restartRequestedAt: vm.spec.restartRequestedAt } : {}),
        ...(vm.spec.deletionPolicy !== undefined ? { deletionPolicy: vm.spec.deletionPolicy } : {}),
        ...(input.userDataSecretName !== undefined ? { userDataSecretRef: { name: input.userDataSecretName, key: 'value' } } : {}),
      },
      hardware: hw.hardware,
      disks: hw.hardware.disks.map((disk, i) => ({ disk, backendId: placement.resolvedStorage[i]?.backendId ?? '' })),
      nics: interfaces.map((nic, i) => ({
        nic,
        backendId: placement.resolvedNetworks[i]?.backendId ?? '',
        ipam: addressing.ipams[i],
      })),
      imageRef,
      failureDomainName: placement.failureDomain.name,
      raw: placement.failureDomain.attributes?.raw ?? {},
    },
  };
}

/** The image on the chosen Provider: the row its provider published wins over the spec source. */
export function resolveImageRef(image: VMImage, placement: Placement): string | undefined {
  const row = image.status?.perProvider?.find((r) => r.providerNamespace === placement.providerNamespace && r.providerName === placement.providerName);
  return row?.resolvedRef ?? image.spec.sources.find((s) => s.providerClass === placement.providerClass)?.ref;
}

function fail(message: string): { readonly ok: false; readonly message: string } {
  return { ok: false, message };
}
