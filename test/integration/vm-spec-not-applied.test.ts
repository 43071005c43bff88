// Through both roles (the generic VirtualMachine controller and the provider
// role of the test-only fake backend, whose machine image is fixed and OS disk grow-only once the
// VM was created, as a real backend's are): an edit that maps to such a change (a smaller disk
// override) is refused by admission on the machine, and the VirtualMachine says so (Ready False,
// SpecNotApplied, naming the field) instead of claiming the new generation; once the edit is one
// the machine takes, it is Ready at its newest generation. A new template of its VMImage is not
// such an edit: a running VM keeps the image its machine was made from.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../support/control-plane.js';
import { FakeCloud } from '../support/fake-backend/fake-cloud.js';
import { fakeDescriptor } from '../support/fake-backend/descriptor.js';
import { runFakeRoles } from '../support/fake-backend/roles.js';
import { installFakeBackend } from '../support/fake-backend/install.js';
import { applyObjects, usePrivatePlane } from '../support/private-plane-fixtures.js';
import { waitFor } from '../support/wait.js';

const NS = 'spec-not-applied';
const VMS = 'virtualmachines.banlieue.io';
const MACHINES = 'fakemachines.infrastructure.banlieue.io';

interface Live {
  metadata: { generation?: number };
  spec: Record<string, unknown>;
  status?: { observedGeneration?: number; conditions?: { type: string; status: string; reason: string; message?: string }[] };
}

async function get(cp: ControlPlane, resource: string, name: string): Promise<Live | undefined> {
  try {
    return JSON.parse(await cp.kubectl(['get', resource, name, '-n', NS, '-o', 'json'])) as Live;
  } catch {
    return undefined;
  }
}

const readyOf = (live: Live | undefined): { status: string; reason: string; message?: string } | undefined =>
  live?.status?.conditions?.find((c) => c.type === 'Ready');

const image = (name: string, ref: string): object => ({
  apiVersion: 'banlieue.io/v1alpha1',
  kind: 'VMImage',
  metadata: { name },
  spec: { osFamily: 'linux', osDistribution: 'debian', osVersion: '13', architecture: 'amd64', sources: [{ providerClass: 'fake', kind: 'Template', ref }] },
});

describe('a VirtualMachine edit its machine cannot take', () => {
  const { plane } = usePrivatePlane();
  const fake = fakeDescriptor(new FakeCloud(500));
  let stopRoles: () => Promise<void>;

  beforeAll(async () => {
    const cp = plane();
    await installFakeBackend(cp);
    stopRoles = runFakeRoles(cp.kubeconfigPath, fake, { machineConcurrency: 2 });
  }, 180_000);

  afterAll(() => stopRoles());

  it('is reported as SpecNotApplied, not as applied, until it is set back', async () => {
    const cp = plane();
    await cp.kubectl(['create', 'namespace', NS]);
    await applyObjects(cp, [
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'fake-creds', namespace: NS }, stringData: { token: 's3cr3t' } },
      {
        apiVersion: 'banlieue.io/v1alpha1',
        kind: 'Provider',
        metadata: { name: 'lab', namespace: NS },
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
      image('fake-linux', 'debian-13'),
      {
        apiVersion: 'banlieue.io/v1alpha1',
        kind: 'VirtualMachine',
        metadata: { name: 'web-1', namespace: NS },
        spec: { classRef: { name: 'fake-small' }, imageRef: { name: 'fake-linux' }, hardwareOverride: { diskOverrides: [{ name: 'os', sizeGiB: 20 }] } },
      },
    ]);
    const ready = await waitFor(
      'the VirtualMachine to be Ready',
      async () => {
        const live = await get(cp, VMS, 'web-1');
        return readyOf(live)?.status === 'True' ? live : undefined;
      },
      120_000,
    );
    const applied = ready.metadata.generation;
    expect(ready.status?.observedGeneration).toBe(applied);
    expect((await get(cp, MACHINES, 'web-1'))?.spec.osDiskSizeGiB).toBe(20);

    // Still no smaller than the class disk, so the VirtualMachine takes it; its machine's disk would shrink.
    await setDisk(cp, 15);
    const refused = await waitFor(
      'the VirtualMachine to report SpecNotApplied',
      async () => {
        const live = await get(cp, VMS, 'web-1');
        return readyOf(live)?.reason === 'SpecNotApplied' ? live : undefined;
      },
      120_000,
    );
    expect(readyOf(refused)).toMatchObject({ status: 'False', message: expect.stringContaining('spec.osDiskSizeGiB cannot shrink once the VM was created') });
    expect(readyOf(refused)?.message).toContain('FakeMachine web-1 is not updated');
    expect(refused.status?.observedGeneration).toBe(applied);
    expect((await get(cp, MACHINES, 'web-1'))?.spec.osDiskSizeGiB).toBe(20);

    // A larger disk is taken, and the VirtualMachine observes that generation.
    await setDisk(cp, 30);
    await readyAtNewestGeneration(cp);
    expect((await get(cp, MACHINES, 'web-1'))?.spec.osDiskSizeGiB).toBe(30);
  });

  it('keeps a running VM on the template it was made from when its image names a new one, and gives the new one to a new VM', async () => {
    const cp = plane();
    await cp.kubectl([
      'patch',
      'vmimages.banlieue.io',
      'fake-linux',
      '--type=merge',
      '-p',
      JSON.stringify({ spec: { sources: [{ providerClass: 'fake', kind: 'Template', ref: 'debian-14' }] } }),
    ]);
    // A label on the VM reaches its machine once the controller has judged the VM against the new image.
    await cp.kubectl(['label', VMS, 'web-1', '-n', NS, 'step=new-template']);
    const machine = await waitFor(
      'web-1 judged against the new template',
      async () => {
        const live = await get(cp, MACHINES, 'web-1');
        return (live?.metadata as { labels?: Record<string, string> } | undefined)?.labels?.step === 'new-template' ? live : undefined;
      },
      120_000,
    );
    expect(machine.spec.image).toBe('debian-13');
    expect(readyOf(await readyAtNewestGeneration(cp))).toMatchObject({ status: 'True', reason: 'Reconciled' });

    await applyObjects(cp, [
      {
        apiVersion: 'banlieue.io/v1alpha1',
        kind: 'VirtualMachine',
        metadata: { name: 'web-2', namespace: NS },
        spec: { classRef: { name: 'fake-small' }, imageRef: { name: 'fake-linux' } },
      },
    ]);
    const fresh = await waitFor('web-2 to get its machine', () => get(cp, MACHINES, 'web-2'), 120_000);
    expect(fresh.spec.image).toBe('debian-14');
  });
});

async function setDisk(cp: ControlPlane, sizeGiB: number): Promise<void> {
  await cp.kubectl([
    'patch',
    VMS,
    'web-1',
    '-n',
    NS,
    '--type=merge',
    '-p',
    JSON.stringify({ spec: { hardwareOverride: { diskOverrides: [{ name: 'os', sizeGiB }] } } }),
  ]);
}

async function readyAtNewestGeneration(cp: ControlPlane): Promise<Live> {
  return waitFor(
    'the VirtualMachine to be Ready at its newest generation',
    async () => {
      const live = await get(cp, VMS, 'web-1');
      return readyOf(live)?.status === 'True' && live?.status?.observedGeneration === live?.metadata.generation ? live : undefined;
    },
    120_000,
  );
}
