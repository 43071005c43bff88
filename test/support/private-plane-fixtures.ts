// Fixtures for suites that run their own control plane (robustness, leader
// election): written with kubectl, as a user and a provider would.
import { afterAll, afterEach, beforeAll } from 'vitest';
import { buildTools, ControlPlane } from './control-plane.js';
import type { RoleProcess } from './controller-process.js';
import { applyCrdsFromDist } from './crds.js';

export const applyObjects = (cp: ControlPlane, objects: object[]): Promise<string> =>
  cp.kubectl(['apply', '--server-side', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));

/** Status as a provider writes it; `ns` empty for cluster-scoped kinds. */
export const patchStatus = (cp: ControlPlane, resource: string, ns: string, name: string, status: object): Promise<string> =>
  cp.kubectl(['patch', resource, name, ...(ns ? ['-n', ns] : []), '--subresource=status', '--type=merge', '-p', JSON.stringify({ status })]);

/** A namespace with a vSphere Provider publishing `domains`, and a class and image usable there (named after the namespace). */
export async function createBackend(cp: ControlPlane, ns: string, domains = ['fd-a']): Promise<void> {
  await cp.kubectl(['create', 'namespace', ns]);
  await applyObjects(cp, [
    {
      apiVersion: 'banlieue.io/v1alpha1',
      kind: 'Provider',
      metadata: { name: 'vsphere', namespace: ns },
      spec: {
        providerClassRef: { name: 'vsphere' },
        connection: { endpoint: 'https://vc.example.com/sdk', credentialsRef: { name: 'creds' } },
        capabilities: { storageClasses: [{ name: 'fast', target: { datastore: 'ds1' } }], networkClasses: [{ name: 'lan', target: { portGroup: 'pg1' } }] },
      },
    },
    {
      apiVersion: 'banlieue.io/v1alpha1',
      kind: 'VMClass',
      metadata: { name: `${ns}-small` },
      spec: {
        hardware: { cpus: 1, memoryMiB: 512, disks: [{ name: 'os', sizeGiB: 10, storageClass: 'fast' }] },
        network: { interfaces: [{ name: 'eth0', networkClass: 'lan' }] },
      },
    },
    {
      apiVersion: 'banlieue.io/v1alpha1',
      kind: 'VMImage',
      metadata: { name: `${ns}-ubuntu` },
      spec: {
        osFamily: 'linux',
        osDistribution: 'ubuntu',
        osVersion: '24.04',
        architecture: 'amd64',
        sources: [{ providerClass: 'vsphere', kind: 'Template', ref: 'ubuntu' }],
      },
    },
  ]);
  const failureDomains = domains.map((name) => ({
    name,
    labels: { name },
    attributes: { availableStorageClasses: ['fast'], availableNetworkClasses: ['lan'], raw: { datacenter: 'dc1', cluster: `cluster-${name}` } },
  }));
  await patchStatus(cp, 'providers.banlieue.io', ns, 'vsphere', { failureDomains });
  await patchStatus(cp, 'vmimages.banlieue.io', '', `${ns}-ubuntu`, { perProvider: [{ providerNamespace: ns, providerName: 'vsphere', ready: true }] });
}

/** A VirtualMachine using the class and image of `createBackend`. */
export const virtualMachine = (ns: string, name: string): object => ({
  apiVersion: 'banlieue.io/v1alpha1',
  kind: 'VirtualMachine',
  metadata: { name, namespace: ns },
  spec: { classRef: { name: `${ns}-small` }, imageRef: { name: `${ns}-ubuntu` } },
});

/**
 * A control plane of the suite's own (for suites that restart it or count its
 * writes), with CRDs from dist/, started before and stopped after the suite;
 * role processes given to `track` are killed after each test.
 */
export function usePrivatePlane(): { plane: () => ControlPlane; track: (p: RoleProcess) => RoleProcess } {
  let cp: ControlPlane | undefined;
  const running: RoleProcess[] = [];
  beforeAll(async () => {
    cp = await ControlPlane.start(await buildTools());
    await applyCrdsFromDist(cp);
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((p) => p.kill()));
  });
  afterAll(async () => {
    await Promise.all(running.splice(0).map((p) => p.kill()));
    await cp?.stop();
  });
  return {
    plane: () => {
      if (!cp) throw new Error('the control plane did not start');
      return cp;
    },
    track: (p) => {
      running.push(p);
      return p;
    },
  };
}
