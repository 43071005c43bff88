// On a real backend peer (vcsim): a VirtualMachine edit its cloned VM cannot take (a smaller
// data disk) is refused by admission on the VSphereMachine and reported on the VirtualMachine
// (Ready False, SpecNotApplied, naming the field), with observedGeneration not claiming it; the
// VM in vCenter stays as it was cloned. A new template of its VMImage is for new VMs: the running
// one keeps the template it was cloned from, Ready.
// The generic mechanism runs on the fake backend (vm-spec-not-applied.test.ts); every backend's
// admission rules are in machine-spec-fixed.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestApi, machineRef, vm, type Obj } from '../support/fixtures.js';
import { waitFor } from '../support/wait.js';
import { readyWithAddress, startVsphereEnv, stopVsphereEnv, type VsphereEnv } from '../support/vsphere/env.js';
import { makeTemplate } from '../support/vsphere/world.js';

const t = new TestApi();

type Condition = { type: string; status: string; reason: string; message?: string };
const readyOf = (o: Obj | undefined): Condition | undefined => (o?.status?.conditions as Condition[] | undefined)?.find((c) => c.type === 'Ready');

describe('a VirtualMachine edit its vSphere VM cannot take (vcsim)', () => {
  let env: VsphereEnv;

  beforeAll(async () => {
    env = await startVsphereEnv('vsphere-spec');
  }, 180_000);
  afterAll(() => stopVsphereEnv(env), 180_000);

  const notApplied = (name: string): Promise<Obj> =>
    waitFor(
      `VirtualMachine ${name} to report SpecNotApplied`,
      async () => {
        const live = await t.get(vm(env.ns, name, '', ''));
        return readyOf(live)?.reason === 'SpecNotApplied' ? live : undefined;
      },
      120_000,
    );

  it('reports a smaller disk as SpecNotApplied and keeps the template it was cloned from when its image names another; the VSphereMachine keeps what the VM has', async () => {
    const name = 'spec-1';
    await t.apply(
      vm(env.ns, name, env.world.vmClass.metadata.name, env.world.vmImage.metadata.name, {
        hardwareOverride: { diskOverrides: [{ name: 'data', sizeGiB: 10 }] },
      }),
    );
    const ready = await readyWithAddress(env, name, '10.20.0.41', 120_000);
    const applied = ready.metadata.generation;
    const ref = machineRef('vsphere', env.ns, name);

    // 8 GiB is still no smaller than the class disk (5 GiB): the VirtualMachine takes it, its cloned disk cannot shrink.
    await t.patch(vm(env.ns, name, '', ''), { spec: { hardwareOverride: { diskOverrides: [{ name: 'data', sizeGiB: 8 }] } } });
    const shrunk = await notApplied(name);
    expect(readyOf(shrunk)).toMatchObject({ status: 'False', message: expect.stringContaining('spec.disks[].sizeGiB cannot shrink once the VM was created') });
    expect(shrunk.status?.observedGeneration).toBe(applied);
    expect((await t.get(ref))?.spec?.disks).toContainEqual(expect.objectContaining({ name: 'data', sizeGiB: 10 }));
    await t.patch(vm(env.ns, name, '', ''), { spec: { hardwareOverride: { diskOverrides: [{ name: 'data', sizeGiB: 10 }] } } });
    await t.condition(vm(env.ns, name, '', ''), 'Ready', 'True', 'Reconciled', 120_000);

    // Another template in vCenter, and the VMImage now names it: the VM was cloned from the first.
    const template = (await t.get(ref))?.spec?.template as string;
    const next = `next-${env.ns}`;
    await makeTemplate(env.client, next);
    const image = env.world.vmImage;
    await t.patch(image, { spec: { sources: [{ providerClass: 'vsphere', kind: 'Template', ref: next }] } });
    try {
      await t.exists(image, (o) => ((o.status?.perProvider ?? []) as { resolvedRef?: string }[]).some((r) => r.resolvedRef?.endsWith(next) === true), 60_000);
      // A label on the VM reaches its machine once the controller has judged the VM against the new template.
      await t.patch(vm(env.ns, name, '', ''), { metadata: { labels: { step: 'next-template' } } });
      const judged = await t.exists(ref, (m) => m.metadata.labels?.step === 'next-template', 60_000);
      expect(judged.spec?.template).toBe(template);
      expect(readyOf(await t.get(vm(env.ns, name, '', '')))).toMatchObject({ status: 'True', reason: 'Reconciled' });
    } finally {
      await t.patch(image, { spec: { sources: [{ providerClass: 'vsphere', kind: 'Template', ref: template }] } });
    }
    await t.condition(vm(env.ns, name, '', ''), 'Ready', 'True', 'Reconciled', 120_000);
  });
});
