// Small, valid objects for the VirtualMachine reconciler's pure modules. Each
// factory takes a partial override so a test states only what it is about.
import { type BackendName } from '../../../../infra/api/backends.js';
import type { VirtualMachine } from '../../../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import type { VMClass } from '../../../../infra/api/banlieue.io/v1alpha1/vm-class.js';
import type { VMImage } from '../../../../infra/api/banlieue.io/v1alpha1/vm-image.js';
import type { Placement } from '../../../../controller/reconcilers/virtual-machine/placement.js';
import { BACKEND_SAMPLES, vmImage } from '../../../support/backend-samples.js';
import { withOverrides, type Overrides } from '../../../support/overrides.js';

export const VM_UID = '0f8b5a4e-7f3c-4d2e-9a61-3c2b1d0e9f87';

/** A VirtualMachine web-1 in team-a; `metadata` given `undefined` for a key leaves it out. */
export function aVm(spec: Partial<VirtualMachine['spec']> = {}, metadata: Overrides<VirtualMachine['metadata']> = {}): VirtualMachine {
  return {
    apiVersion: 'banlieue.io/v1alpha1',
    kind: 'VirtualMachine',
    metadata: withOverrides({ name: 'web-1', namespace: 'team-a', uid: VM_UID, labels: { app: 'web' } }, metadata),
    spec: { classRef: { name: 'small' }, imageRef: { name: 'ubuntu-24.04' }, ...spec },
  };
}

export function aClass(spec: Partial<VMClass['spec']> = {}): VMClass {
  return {
    apiVersion: 'banlieue.io/v1alpha1',
    kind: 'VMClass',
    metadata: { name: 'small' },
    spec: {
      hardware: {
        cpus: 2,
        memoryMiB: 4096,
        disks: [
          { name: 'os', sizeGiB: 20, storageClass: 'fast' },
          { name: 'data', sizeGiB: 100, storageClass: 'fast', provisioning: 'thick' },
        ],
      },
      network: { interfaces: [{ name: 'eth0', networkClass: 'prod' }] },
      firmware: 'efi',
      ...spec,
    },
  };
}

/** A class with one static interface (class-level gateway, nameservers, domain) and one DHCP interface. */
export function aStaticClass(): VMClass {
  return aClass({
    network: {
      interfaces: [
        {
          name: 'eth0',
          networkClass: 'prod',
          ipam: { mode: 'static', gateway: '10.0.0.1', nameservers: ['10.0.0.53', '10.0.1.53'], domain: 'lab.example' },
        },
        { name: 'eth1', networkClass: 'backup' },
      ],
    },
  });
}

/** The image `ubuntu-24.04`, with each backend's sample source. */
export function anImage(perProvider: NonNullable<VMImage['status']>['perProvider'] = []): VMImage {
  return vmImage('ubuntu-24.04', { rows: perProvider });
}

export interface PlacementShape {
  /** Network class per class interface. @default ['prod'] */
  readonly networks?: readonly string[];
  /** Number of class disks, all on the backend's default target. @default 2 */
  readonly disks?: number;
  /** Failure-domain raw attributes. @default the backend sample's, on its sample site, with the optional ones */
  readonly raw?: Record<string, string>;
}

/** A placement on `<backend>-a`, FD `fd-1`; `change` replaces whole fields. */
export function aPlacement(backend: BackendName, shape: PlacementShape = {}, change: Partial<Placement> = {}): Placement {
  const sample = BACKEND_SAMPLES[backend];
  const { networks = ['prod'], disks = 2, raw = { ...sample.raw(sample.site), ...sample.optionalRaw } } = shape;
  return {
    providerName: `${backend}-a`,
    providerNamespace: 'team-a',
    providerClass: backend,
    failureDomain: { name: 'fd-1', labels: { name: 'fd-1' }, attributes: { raw } },
    resolvedStorage: Array.from({ length: disks }, () => ({ className: 'fast', backendId: sample.storage.id })),
    resolvedNetworks: networks.map((c, i) => ({ className: c, backendId: `${sample.network.id}${i === 0 ? '' : String(i)}` })),
    ...change,
  };
}
