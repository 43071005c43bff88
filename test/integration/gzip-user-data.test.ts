// Gzip user-data reaches the VM as the bytes it was given, through both roles
// (the VirtualMachine controller renders its Secret, the provider role of the
// test-only fake backend hands the bytes to its cloud), from a Secret's data
// and from a ConfigMap's binaryData; never decoded as UTF-8 (which would turn
// every byte above 0x7f that is not UTF-8 into U+FFFD).
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userDataBytes } from '../../controller/backends/user-data-bytes.js';
import type { ControlPlane } from '../support/control-plane.js';
import { fakeLab } from '../support/fake-backend/lab.js';
import { FakeCloud } from '../support/fake-backend/fake-cloud.js';
import { fakeDescriptor } from '../support/fake-backend/descriptor.js';
import { runFakeRoles } from '../support/fake-backend/roles.js';
import { installFakeBackend } from '../support/fake-backend/install.js';
import { applyObjects, usePrivatePlane } from '../support/private-plane-fixtures.js';
import { waitFor } from '../support/wait.js';

const NS = 'gzip-user-data';
const GZIP = gzipSync(Buffer.from('#cloud-config\nruncmd: [echo, "${VM_NAME}"]\n'));

interface Live {
  data?: Record<string, string>;
  status?: { conditions?: { type: string; status: string; reason: string }[] };
}

async function get(cp: ControlPlane, resource: string, name: string): Promise<Live | undefined> {
  try {
    return JSON.parse(await cp.kubectl(['get', resource, name, '-n', NS, '-o', 'json'])) as Live;
  } catch {
    return undefined;
  }
}

const vm = (name: string, userData: Record<string, unknown>): object => ({
  apiVersion: 'banlieue.io/v1alpha1',
  kind: 'VirtualMachine',
  metadata: { name, namespace: NS },
  spec: { classRef: { name: 'fake-small' }, imageRef: { name: 'fake-linux' }, userData },
});

describe('gzip user-data', () => {
  const { plane } = usePrivatePlane();
  const cloud = new FakeCloud(500);
  const fake = fakeDescriptor(cloud);
  let stopRoles: () => Promise<void>;

  beforeAll(async () => {
    const cp = plane();
    await installFakeBackend(cp);
    stopRoles = runFakeRoles(cp.kubeconfigPath, fake, { machineConcurrency: 2 });
    await cp.kubectl(['create', 'namespace', NS]);
    await applyObjects(cp, [
      ...fakeLab(NS),
      // As `kubectl create secret generic --from-file=user-data=cloud-config.gz` and `kubectl create configmap --from-file` store it.
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'gz-secret', namespace: NS }, data: { 'user-data': GZIP.toString('base64') } },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'gz-configmap', namespace: NS }, binaryData: { 'user-data': GZIP.toString('base64') } },
    ]);
  }, 180_000);

  afterAll(() => stopRoles());

  it.each([
    ['a Secret', 'web-secret', { secretRef: { name: 'gz-secret' } }],
    ["a ConfigMap's binaryData", 'web-configmap', { configMapRef: { name: 'gz-configmap' } }],
  ])(
    'reaches the VM byte for byte from %s, unrendered',
    async (_, name, userData) => {
      const cp = plane();
      await applyObjects(cp, [vm(name, userData)]);

      const created = await waitFor(`the fake VM of ${name}`, async () => [...cloud.vms.values()].find((v) => v.name === name), 120_000);
      expect(userDataBytes(created.userData ?? '')).toEqual(GZIP);
      const rendered = await get(cp, 'secret', `${name}-user-data`);
      expect(Buffer.from(rendered?.data?.value ?? '', 'base64')).toEqual(GZIP);
      await waitFor(
        `${name} to be Ready`,
        async () =>
          (await get(cp, 'virtualmachines.banlieue.io', name))?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') || undefined,
        120_000,
      );
    },
    300_000,
  );

  it('reaches the VM of a VirtualMachine named with 253 characters: its rendered Secret is named within 253', async () => {
    const cp = plane();
    const name = `${'long.'.repeat(50)}vm1`;
    expect(name).toHaveLength(253);
    await applyObjects(cp, [vm(name, { secretRef: { name: 'gz-secret' } })]);

    const created = await waitFor('the fake VM of the long-named VirtualMachine', async () => [...cloud.vms.values()].find((v) => v.name === name), 120_000);
    expect(userDataBytes(created.userData ?? '')).toEqual(GZIP);
    await waitFor(
      'it to be Ready',
      async () => (await get(cp, 'virtualmachines.banlieue.io', name))?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') || undefined,
      120_000,
    );
    const secrets = JSON.parse(await cp.kubectl(['get', 'secrets', '-n', NS, '-o', 'json'])) as {
      items: { metadata: { name: string; ownerReferences?: { name: string }[] } }[];
    };
    const rendered = secrets.items.filter((o) => o.metadata.ownerReferences?.some((r) => r.name === name)).map((o) => o.metadata.name);
    expect(rendered).toHaveLength(1);
    expect(rendered[0]?.length).toBeLessThanOrEqual(253);
    expect(rendered[0]?.startsWith('long.long.')).toBe(true);
  }, 300_000);
});
