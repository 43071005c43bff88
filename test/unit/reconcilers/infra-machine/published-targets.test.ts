// What a Provider publishes for its machines to name, and what a machine's
// spec names on each backend: a name outside the published ones is refused.
import { describe, expect, it } from 'vitest';
import type { Provider } from '../../../../infra/api/banlieue.io/v1alpha1/provider.js';
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

const refusedFields = (provider: Provider, spec: VSphereMachineSpec): string[] =>
  unpublishedTargets(vsphereNamedTargets(spec), publishedTargets(provider)).map((t) => `${t.field}=${t.value}`);

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

  it('names each refused field, the kinds it may be published as, and who publishes it', () => {
    const [refused] = unpublishedTargets(vsphereNamedTargets(vsphereSpec({ datastore: 'ds-prod' })), publishedTargets(vsphereProvider()));
    expect(describeUnpublished('vc', refused ? [refused] : [])).toBe(
      'Provider vc does not publish spec.datastore "ds-prod" (a datastore or datastoreCluster): nothing is created until it does ' +
        "(its owner lists it in the Provider's spec.allowedTargets or a capability class target, or discovery finds it)",
    );
  });
});

describe('targets a machine names', () => {
  it('libvirt: the pool, the pool of a boot volume named <pool>/<volume>, each network or bridge', () => {
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
      { field: 'spec.pool', kinds: ['pool'], value: 'default' },
      { field: 'spec.bootSource.volume', kinds: ['pool'], value: 'other-pool' },
      { field: 'spec.network[0].source.name', kinds: ['network'], value: 'default' },
      { field: 'spec.network[1].source.name', kinds: ['bridge'], value: 'br-prod' },
    ]);
    expect(libvirtNamedTargets({ ...spec, bootSource: { kind: 'backingVolume', volume: 'ubuntu.qcow2' } }).map((t) => t.field)).not.toContain(
      'spec.bootSource.volume',
    );
  });

  it('Proxmox: the node, every storage, the resource pool, each bridge and VLAN tag', () => {
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
