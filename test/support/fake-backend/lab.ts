// The fake backend's usual world in a namespace: credentials, a Provider `lab`
// with one storage and one network class, the VMClass `fake-small` and the
// VMImage `fake-linux` (cluster-scoped) that VirtualMachines name.
import type { Obj } from '../fixtures.js';

export function fakeLab(ns: string): Obj[] {
  return [
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'fake-creds', namespace: ns }, stringData: { token: 's3cr3t' } } as Obj,
    {
      apiVersion: 'banlieue.io/v1alpha1',
      kind: 'Provider',
      metadata: { name: 'lab', namespace: ns },
      spec: {
        providerClassRef: { name: 'fake' },
        connection: { endpoint: 'https://fake.invalid', credentialsRef: { name: 'fake-creds' } },
        capabilities: { storageClasses: [{ name: 'fast', target: { pool: 'p1' } }], networkClasses: [{ name: 'lan', target: { bridge: 'br0' } }] },
      },
    },
    {
      apiVersion: 'banlieue.io/v1alpha1',
      kind: 'VMClass',
      metadata: { name: 'fake-small' },
      spec: {
        hardware: { cpus: 2, memoryMiB: 1024, disks: [{ name: 'os', sizeGiB: 10, storageClass: 'fast' }] },
        network: { interfaces: [{ name: 'eth0', networkClass: 'lan' }] },
      },
    },
    {
      apiVersion: 'banlieue.io/v1alpha1',
      kind: 'VMImage',
      metadata: { name: 'fake-linux' },
      spec: {
        osFamily: 'linux',
        osDistribution: 'debian',
        osVersion: '13',
        architecture: 'amd64',
        sources: [{ providerClass: 'fake', kind: 'Template', ref: 'debian-13' }],
      },
    },
  ];
}
