// Autoscaling from zero: every *MachineTemplate says in status what one machine
// of it offers a Node (CAPI InfraMachineTemplate contract), computed by the
// controller from the template's spec, as the cluster-autoscaler reads it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INFRA, TestApi, type Obj } from '../support/fixtures.js';
import { startControllerNamespace } from '../support/kube.js';
import { waitFor } from '../support/wait.js';

const template = (kind: string, ns: string, spec: Record<string, unknown>): Obj => ({
  apiVersion: INFRA,
  kind,
  metadata: { name: `${kind.toLowerCase()}-workers`, namespace: ns },
  spec: { template: { spec } },
});

/** One template of every backend's kind, with the capacity a machine of it gets. */
const TEMPLATES: [string, Record<string, unknown>, Record<string, string>][] = [
  ['VSphereMachineTemplate', { template: 'ubuntu', numCpus: 2, memoryMiB: 4096 }, { cpu: '2', memory: '4096Mi' }],
  [
    'ProxmoxMachineTemplate',
    { templateVmid: 9000, cores: 2, sockets: 2, memoryMiB: 3072, osDiskSizeGiB: 20, nics: [{ name: 'net0', bridge: 'vmbr0' }] },
    { cpu: '4', memory: '3072Mi' },
  ],
  [
    'LibvirtMachineTemplate',
    { pool: 'default', bootSource: { kind: 'backingVolume', volume: 'ubuntu.qcow2' }, vcpus: 6, memoryMiB: 6144, disks: [{ name: 'os', sizeGiB: 20 }] },
    { cpu: '6', memory: '6144Mi' },
  ],
  [
    'CloudHypervisorMachineTemplate',
    { bootSource: { kind: 'image', image: 'ubuntu.raw' }, cpus: { boot: 2, max: 8 }, memory: { sizeMiB: 1024 }, osDiskSizeGiB: 20, storageClass: 'local' },
    { cpu: '2', memory: '1024Mi' },
  ],
];

describe('machine templates for autoscaling from zero', () => {
  const t = new TestApi();
  let ns: string;
  let stopNamespace: () => Promise<void>;

  beforeAll(async () => {
    ({ ns, stop: stopNamespace } = await startControllerNamespace('templates'));
  });

  afterAll(async () => {
    await stopNamespace?.();
  });

  it.each(TEMPLATES)('publishes status.capacity and status.nodeInfo on a %s from its spec', async (kind, spec, capacity) => {
    const created = await t.apply(template(kind, ns, spec));
    const sized = await waitFor(
      `${kind} status.capacity`,
      async () => {
        const live = await t.get(created);
        return live?.status?.capacity ? live : undefined;
      },
      60_000,
    );
    expect(sized.status).toEqual({ capacity, nodeInfo: { architecture: 'amd64', operatingSystem: 'linux' } });
  });
});
