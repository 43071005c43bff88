// A small Proxmox world for tests and benchmarks: the Provider/Secret/VMClass/
// VMImage a user writes to run VMs on the PVE simulator (test/sims/proxmox/).
// No API client here: the bench imports it outside vitest.
import type { ProxmoxSim } from '../../sims/proxmox/proxmox-sim.js';
import type { Obj } from '../fixtures.js';

const CORE = 'banlieue.io/v1alpha1';

export interface ProxmoxWorld {
  readonly secret: Obj;
  readonly provider: Obj;
  readonly vmClass: Obj;
  readonly vmImage: Obj;
}

/** What a user writes to run VMs on the simulated cluster: each node a failure domain, template 9000 shared by clones. */
export function proxmoxWorld(ns: string, sim: ProxmoxSim, suffix: string): ProxmoxWorld {
  return {
    secret: {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'pve-token', namespace: ns },
      stringData: { tokenID: sim.token.tokenID, tokenSecret: sim.token.tokenSecret },
    },
    provider: {
      apiVersion: CORE,
      kind: 'Provider',
      metadata: { name: 'pve', namespace: ns, labels: { backend: 'proxmox' } },
      spec: {
        providerClassRef: { name: 'proxmox' },
        connection: { endpoint: sim.url, credentialsRef: { name: 'pve-token' }, caBundle: { inline: sim.caPem } },
        capabilities: {
          // Shared storage: a template on pve1 clones to every node.
          storageClasses: [{ name: 'fast', target: { storage: 'ceph' } }],
          networkClasses: [{ name: 'lan', target: { bridge: 'vmbr0' } }],
        },
      },
    },
    vmClass: {
      apiVersion: CORE,
      kind: 'VMClass',
      metadata: { name: `pve-small-${suffix}` },
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
      metadata: { name: `pve-ubuntu-${suffix}` },
      // The template on shared storage (sim default 9001 `ubuntu-2404-shared` on ceph).
      spec: {
        osFamily: 'linux',
        osDistribution: 'ubuntu',
        osVersion: '24.04',
        architecture: 'amd64',
        sources: [{ providerClass: 'proxmox', kind: 'Template', ref: '9001' }],
      },
    },
  };
}
