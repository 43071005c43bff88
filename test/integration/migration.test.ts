// An impossible placement per migrationPolicy: the Provider a VM runs on is
// deleted. automatic recreates it on a Provider that fits, announced first;
// manual (the default) says so and waits for the banlieue.io/migrate
// annotation; never stays.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControllerNamespace } from '../support/kube.js';
import { TestApi, failureDomains, imageRows, machineRef, provider, vm, vmClass, vmImage } from '../support/fixtures.js';

describe('a VirtualMachine whose Provider is deleted', () => {
  const t = new TestApi();
  let ns: string;
  let stopNamespace: () => Promise<void>;
  const suffix = Math.random().toString(36).slice(2, 7);
  const cls = `drift-${suffix}`;
  const image = `drift-${suffix}`;
  const uids: Record<string, string> = {};
  const POLICIES = { automatic: 'automatic', manual: 'manual', never: 'never', unset: undefined } as const;

  beforeAll(async () => {
    ({ ns, stop: stopNamespace } = await startControllerNamespace('drift'));
    await t.apply(vmClass(cls));
    const img = await t.apply(vmImage(image));
    for (const name of ['a-vcenter', 'b-vcenter']) {
      const p = await t.apply(provider(ns, name, 'vsphere'));
      await t.applyStatus(p, failureDomains('vsphere', [{ name: `${name}-fd` }]));
    }
    await t.applyStatus(img, imageRows(['a-vcenter', 'b-vcenter'].map((p) => ({ ns, provider: p, ready: true }))));
    for (const [name, policy] of Object.entries(POLICIES)) {
      const v = await t.apply(vm(ns, name, cls, image, policy ? { migrationPolicy: policy } : {}));
      const m = await t.exists(machineRef('vsphere', ns, v.metadata.name));
      expect(m.spec?.providerRef).toEqual({ name: 'a-vcenter' });
      uids[name] = m.metadata.uid ?? '';
    }
    await t.delete(provider(ns, 'a-vcenter', 'vsphere'));
  });

  afterAll(async () => {
    await stopNamespace?.();
    await t.delete({ apiVersion: 'banlieue.io/v1alpha1', kind: 'VMClass', metadata: { name: cls } });
    await t.delete({ apiVersion: 'banlieue.io/v1alpha1', kind: 'VMImage', metadata: { name: image } });
  });

  it('recreates an automatic VM on a Provider that fits', async () => {
    const m = await t.exists(machineRef('vsphere', ns, 'automatic'), (o) => o.spec?.providerRef?.name === 'b-vcenter');
    expect(m.metadata.uid).not.toBe(uids.automatic);
    const live = await t.condition(vm(ns, 'automatic', cls, image), 'PlacementValid', 'True');
    expect(live.status?.scheduled.providerName).toBe('b-vcenter');
  });

  it.each(['manual', 'unset'])('says so on a %s VM and moves it only once annotated', async (name) => {
    const v = vm(ns, name, cls, image);
    const live = await t.condition(v, 'PlacementValid', 'False', 'ProviderGone');
    expect(live.status?.conditions.find((c: { type: string }) => c.type === 'PlacementValid')?.message).toContain(
      'Provider a-vcenter it runs on no longer exists; annotate banlieue.io/migrate=true to recreate it on b-vcenter/b-vcenter-fd',
    );
    expect(live.status?.conditions.find((c: { type: string }) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'PlacementInvalid' });
    expect((await t.get(machineRef('vsphere', ns, name)))?.metadata.uid).toBe(uids[name]);
    await t.patch(v, { metadata: { annotations: { 'banlieue.io/migrate': 'true' } } });
    await t.exists(machineRef('vsphere', ns, name), (o) => o.spec?.providerRef?.name === 'b-vcenter');
    await t.condition(v, 'PlacementValid', 'True');
  });

  it('leaves a never VM where it is, saying why', async () => {
    const v = vm(ns, 'never', cls, image);
    const live = await t.condition(v, 'PlacementValid', 'False', 'ProviderGone');
    expect(live.status?.conditions.find((c: { type: string }) => c.type === 'PlacementValid')?.message).toContain(
      'migrationPolicy never keeps it on a-vcenter/a-vcenter-fd',
    );
    const m = await t.get(machineRef('vsphere', ns, 'never'));
    expect(m?.metadata.uid).toBe(uids.never);
    expect(m?.spec?.providerRef).toEqual({ name: 'a-vcenter' });
  });
});
