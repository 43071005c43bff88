// What a Provider publishes for its machines to name, and what a machine's
// spec names on each backend: a name outside the published ones is refused.
import { describe, expect, it } from 'vitest';
import type { Provider } from '../../../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { VMImage } from '../../../../infra/api/banlieue.io/v1alpha1/vm-image.js';
import type { LibvirtMachineSpec } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/libvirt-machine.js';
import type { ProxmoxMachineSpec } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/proxmox-machine.js';
import type { VSphereMachineSpec } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/vsphere-machine.js';
import { libvirtNamedTargets } from '../../../../controller/backends/libvirt/build-machine.js';
import { proxmoxNamedTargets } from '../../../../controller/backends/proxmox/build-machine.js';
import { vsphereNamedTargets } from '../../../../controller/backends/vsphere/build-machine.js';
import { describeUnpublished, publishedTargets, unpublishedTargets } from '../../../../controller/reconcilers/infra-machine/published-targets.js';

/** A vSphere Provider: one discovered failure domain, a storage and a network class (one per-zone datastore), and `allowed`. */
function vsphereProvider(allowed: NonNullable<Provider['spec']['allowedTargets']> = []): Provider {
  return {
    apiVersion: 'banlieue.io/v1alpha1',
    kind: 'Provider',
    metadata: { name: 'vc', namespace: 'team-a' },
    spec: {
      providerClassRef: { name: 'vsphere' },
      connection: { endpoint: 'https://vc.example.com/sdk' },
      capabilities: {
        storageClasses: [{ name: 'fast', target: { datastore: 'ds-fast' }, perZone: [{ cluster: 'C1', target: { datastoreCluster: 'pod-1' } }] }],
        networkClasses: [{ name: 'prod', target: { portGroup: 'VM Network' } }],
      },
      ...(allowed.length > 0 ? { allowedTargets: allowed } : {}),
    },
    status: { failureDomains: [{ name: 'vc-dc1-c1', attributes: { raw: { datacenter: 'DC1', cluster: 'C1', resourcePool: 'Resources' } } }] },
  };
}

const vsphereSpec = (extra: Partial<VSphereMachineSpec>): VSphereMachineSpec => ({ template: 'ubuntu', numCpus: 2, memoryMiB: 4096, ...extra });

/** A VMImage with a vSphere source `ref`, and the row `resolvedRef` another provider reported for Provider team-a/vc. */
function image(ref: string, resolvedRef?: string): VMImage {
  return {
    apiVersion: 'banlieue.io/v1alpha1',
    kind: 'VMImage',
    metadata: { name: ref },
    spec: { sources: [{ providerClass: 'vsphere', kind: 'Template', ref }] },
    ...(resolvedRef ? { status: { perProvider: [{ providerNamespace: 'team-a', providerName: 'vc', ready: true, resolvedRef }] } } : {}),
  } as VMImage;
}

const IMAGES = [image('ubuntu')];

const refusedFields = (provider: Provider, spec: VSphereMachineSpec, images: readonly VMImage[] = IMAGES): string[] =>
  unpublishedTargets(vsphereNamedTargets(spec), publishedTargets(provider, images)).map((t) => `${t.field}=${t.value}`);

describe('targets a Provider publishes', () => {
  it("takes its failure domains' raw facts and its classes' targets, per-zone ones too", () => {
    const spec = vsphereSpec({ datacenter: 'DC1', cluster: 'C1', datastore: 'pod-1', network: [{ name: 'eth0', portGroup: 'VM Network' }] });
    expect(refusedFields(vsphereProvider(), spec)).toEqual([]);
    expect(refusedFields(vsphereProvider(), vsphereSpec({ datastore: 'ds-fast' }))).toEqual([]);
  });

  it('refuses every other name, field by field: another datacenter, a folder, a datastore, a port group', () => {
    const spec = vsphereSpec({
      datacenter: 'DC-prod',
      folder: 'prod/db',
      resourcePool: 'prod-pool',
      datastore: 'ds-prod',
      network: [
        { name: 'eth0', portGroup: 'VM Network' },
        { name: 'eth1', portGroup: 'pg-backup' },
      ],
    });
    expect(refusedFields(vsphereProvider(), spec)).toEqual([
      'spec.datacenter=DC-prod',
      'spec.resourcePool=prod-pool',
      'spec.folder=prod/db',
      'spec.datastore=ds-prod',
      'spec.network[1].portGroup=pg-backup',
    ]);
  });

  it("takes what the Provider's owner lists in spec.allowedTargets, and '*' for any name of a kind", () => {
    const provider = vsphereProvider([
      { kind: 'folder', names: ['tenants/a'] },
      { kind: 'distributedPortGroup', names: ['*'] },
    ]);
    expect(refusedFields(provider, vsphereSpec({ folder: 'tenants/a', network: [{ name: 'eth0', portGroup: 'dvpg-anything' }] }))).toEqual([]);
    expect(refusedFields(provider, vsphereSpec({ folder: 'tenants/b' }))).toEqual(['spec.folder=tenants/b']);
  });

  it("takes as images the VMImages' sources for its backend and the rows resolved for it, and allowedTargets kind image", () => {
    const images = [image('ubuntu', 'templates/ubuntu-22.04'), image('other-tenant-row')];
    expect(refusedFields(vsphereProvider(), vsphereSpec({ template: 'ubuntu' }), images)).toEqual([]);
    expect(refusedFields(vsphereProvider(), vsphereSpec({ template: 'templates/ubuntu-22.04' }), images)).toEqual([]);
    // A production VM or template no VMImage names, nor the Provider's owner.
    expect(refusedFields(vsphereProvider(), vsphereSpec({ template: 'prod/db-01' }), images)).toEqual(['spec.template=prod/db-01']);
    // A row resolved for another Provider publishes nothing here.
    const elsewhere = {
      ...image('rocky'),
      status: { perProvider: [{ providerNamespace: 'team-b', providerName: 'vc', ready: true, resolvedRef: 'rocky-9' }] },
    } as VMImage;
    expect(refusedFields(vsphereProvider(), vsphereSpec({ template: 'rocky-9' }), [elsewhere])).toEqual(['spec.template=rocky-9']);
    expect(refusedFields(vsphereProvider([{ kind: 'image', names: ['*'] }]), vsphereSpec({ template: 'capv/any' }), [])).toEqual([]);
  });

  it('names each refused field, the kinds it may be published as, and who publishes it', () => {
    const [refused] = unpublishedTargets(vsphereNamedTargets(vsphereSpec({ datastore: 'ds-prod' })), publishedTargets(vsphereProvider(), IMAGES));
    expect(describeUnpublished('vc', refused ? [refused] : [])).toBe(
      'Provider vc does not publish spec.datastore "ds-prod" (a datastore or datastoreCluster): nothing is created until it does ' +
        "(its owner lists it in the Provider's spec.allowedTargets or a capability class target, or discovery finds it; an image is also published by a VMImage source for its backend)",
    );
  });
});

describe('targets a machine names', () => {
  it('libvirt: the boot volume as an image, the pool, the pool of a boot volume named <pool>/<volume>, each network or bridge', () => {
    const spec: LibvirtMachineSpec = {
      pool: 'default',
      bootSource: { kind: 'backingVolume', volume: 'other-pool/machine-os' },
      vcpus: 1,
      memoryMiB: 512,
      disks: [{ name: 'os', sizeGiB: 10 }],
      network: [
        { name: 'eth0', source: { kind: 'network', name: 'default' } },
        { name: 'eth1', source: { kind: 'bridge', name: 'br-prod' } },
      ],
    };
    expect(libvirtNamedTargets(spec)).toEqual([
      { field: 'spec.bootSource.volume', kinds: ['image'], value: 'other-pool/machine-os' },
      { field: 'spec.pool', kinds: ['pool'], value: 'default' },
      { field: 'spec.bootSource.volume', kinds: ['pool'], value: 'other-pool' },
      { field: 'spec.network[0].source.name', kinds: ['network'], value: 'default' },
      { field: 'spec.network[1].source.name', kinds: ['bridge'], value: 'br-prod' },
    ]);
    expect(libvirtNamedTargets({ ...spec, bootSource: { kind: 'backingVolume', volume: 'ubuntu.qcow2' } }).map((t) => `${t.field} as ${t.kinds[0]}`)).toEqual(
      expect.not.arrayContaining(['spec.bootSource.volume as pool']),
    );
  });

  it('Proxmox: the template VMID as an image, the node, every storage, the resource pool, each bridge and VLAN tag', () => {
    const spec: ProxmoxMachineSpec = {
      node: 'pve1',
      templateVmid: 9000,
      storage: 'local-lvm',
      pool: 'tenants',
      cores: 2,
      memoryMiB: 2048,
      osDiskSizeGiB: 20,
      dataDisks: [{ name: 'data', sizeGiB: 10, storage: 'ceph' }],
      nics: [{ name: 'eth0', bridge: 'vmbr0', vlan: 20 }],
      isoStorage: 'local',
    };
    expect(proxmoxNamedTargets(spec).map((t) => `${t.field}=${t.value} as ${t.kinds.join('|')}`)).toEqual([
      'spec.templateVmid=9000 as image',
      'spec.node=pve1 as node',
      'spec.storage=local-lvm as storage',
      'spec.dataDisks[0].storage=ceph as storage',
      'spec.isoStorage=local as storage|isoStorage',
      'spec.pool=tenants as pool',
      'spec.nics[0].bridge=vmbr0 as bridge',
      'spec.nics[0].vlan=20 as vlan',
    ]);
  });
});
