// A small vSphere world for tests and benchmarks: vcsim, a template in it,
// the Provider/Secret/VMClass/VMImage a user would write, and the part VMware
// Tools plays (a guest IP) done through vcsim's SET.guest.ipAddress hook.
import type { ManagedObjectReference } from '../../../controller/backends/vsphere/client/vim-types.js';
import { VsphereClient } from '../../../controller/backends/vsphere/client/vsphere-client.js';
import type { Vcsim } from '../../peers/vsphere/vcsim.js';
import type { Obj } from '../fixtures.js';

const CORE = 'banlieue.io/v1alpha1';

export function vcsimClient(vcsim: Vcsim): Promise<VsphereClient> {
  return VsphereClient.connect({ endpoint: vcsim.url, username: vcsim.username, password: vcsim.password, caPem: vcsim.caPem });
}

/** A powered-off template named `name` in the first datacenter, cloned from vcsim's first VM. */
export async function makeTemplate(client: VsphereClient, name: string): Promise<ManagedObjectReference> {
  const [dc] = await client.inventory.datacenters();
  if (!dc) throw new Error('vcsim has no datacenter');
  const [cluster] = await client.inventory.clusters(dc.hostFolder);
  const source = await client.search.findByInventoryPath(`${dc.name}/vm/${dc.name}_C0_RP0_VM0`);
  if (!cluster || !source) throw new Error('vcsim inventory is not as expected');
  const template = await client.vms.clone(source, dc.vmFolder, name, { location: { pool: cluster.resourcePool }, powerOn: false });
  await client.vms.markAsTemplate(template);
  return template;
}

/**
 * A VM's spec.placement keeping it in the template's datacenter (makeTemplate clones DC0's VM): vcsim
 * clones a template only within its own datacenter (vCenter also across), and a burst spreads.
 */
export const IN_TEMPLATE_DATACENTER = { failureDomainSelector: { matchLabels: { datacenter: 'DC0' } } };

export interface VsphereWorld {
  readonly secret: Obj;
  readonly provider: Obj;
  readonly vmClass: Obj;
  readonly vmImage: Obj;
}

/** Where and as whom a vSphere client logs in: vcsim, or a proxy in front of it. */
export type VcenterEndpoint = Pick<Vcsim, 'url' | 'username' | 'password' | 'caPem'>;

/** What a user writes to run VMs on vcsim: every datacenter/cluster is a failure domain. */
export function vsphereWorld(ns: string, vcsim: VcenterEndpoint, suffix: string, template: string): VsphereWorld {
  return {
    secret: {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'vcsim-creds', namespace: ns },
      stringData: { username: vcsim.username, password: vcsim.password },
    },
    provider: {
      apiVersion: CORE,
      kind: 'Provider',
      metadata: { name: 'vcsim', namespace: ns, labels: { backend: 'vsphere' } },
      spec: {
        providerClassRef: { name: 'vsphere' },
        connection: { endpoint: vcsim.url, credentialsRef: { name: 'vcsim-creds' }, caBundle: { inline: vcsim.caPem } },
        capabilities: {
          storageClasses: [{ name: 'fast', target: { datastore: 'LocalDS_0' } }],
          networkClasses: [{ name: 'lan', target: { portGroup: 'VM Network' } }],
        },
      },
    },
    vmClass: {
      apiVersion: CORE,
      kind: 'VMClass',
      metadata: { name: `vsphere-small-${suffix}` },
      spec: {
        hardware: {
          cpus: 2,
          memoryMiB: 1024,
          disks: [
            { name: 'os', sizeGiB: 20, storageClass: 'fast' },
            { name: 'data', sizeGiB: 5, storageClass: 'fast' },
          ],
        },
        network: { interfaces: [{ name: 'eth0', networkClass: 'lan' }] },
      },
    },
    vmImage: {
      apiVersion: CORE,
      kind: 'VMImage',
      metadata: { name: `vsphere-ubuntu-${suffix}` },
      spec: {
        osFamily: 'linux',
        osDistribution: 'ubuntu',
        osVersion: '24.04',
        architecture: 'amd64',
        sources: [{ providerClass: 'vsphere', kind: 'Template', ref: template }],
      },
    },
  };
}

/** What VMware Tools would report: `ip` as the guest IP of the VM with BIOS UUID `uuid`. False while there is no such VM. */
export async function playTools(client: VsphereClient, uuid: string, ip: string): Promise<boolean> {
  const vm = await client.search.findVmByBiosUuid(uuid);
  if (!vm) return false;
  await client.vms.reconfigure(vm, { extraConfig: { 'SET.guest.ipAddress': ip } });
  return true;
}

/** VMs (not templates) in every datacenter whose name starts with `prefix`. */
export async function vmsNamed(client: VsphereClient, prefix: string): Promise<string[]> {
  const names: string[] = [];
  for (const dc of await client.inventory.datacenters()) {
    for (const vm of await client.vms.list(dc.vmFolder)) if (!vm.template && vm.name.startsWith(prefix)) names.push(vm.name);
  }
  return names.sort();
}

/** The UUID in a `vsphere://<uuid>` providerID. */
export function uuidOf(providerID: string): string {
  return providerID.replace(/^vsphere:\/\//, '');
}

/** The VMs (not templates) of every datacenter whose guestinfo, base64 values decoded, holds `marker`. */
export async function guestInfoHolding(client: VsphereClient, marker: string): Promise<string[]> {
  const holding: string[] = [];
  for (const dc of await client.inventory.datacenters()) {
    for (const vm of await client.vms.list(dc.vmFolder)) {
      if (vm.template) continue;
      const extra = await client.vms.extraConfig(vm.ref);
      const values = [...extra]
        .filter(([key]) => key.startsWith('guestinfo.'))
        .map(([key, value]) => (extra.get(`${key}.encoding`) === 'base64' ? Buffer.from(value, 'base64').toString('utf8') : value));
      if (values.some((v) => v.includes(marker))) holding.push(vm.name);
    }
  }
  return holding.sort();
}
