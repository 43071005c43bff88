// Placement drift per migrationPolicy: the failure domain a VM runs in stops
// fitting; automatic recreates it elsewhere, manual waits for the
// banlieue.io/migrate annotation, never stays.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControllerNamespace } from '../support/kube.js';
import { TestApi, failureDomains, imageRows, machineRef, provider, vm, vmClass, vmImage, type Obj } from '../support/fixtures.js';

describe('placement drift', () => {
  const t = new TestApi();
  let ns: string;
  let stopNamespace: () => Promise<void>;
  let prov: Obj;
  const suffix = Math.random().toString(36).slice(2, 7);
  const cls = `drift-${suffix}`;
  const image = `drift-${suffix}`;
  const uids: Record<string, string> = {};

  beforeAll(async () => {
    ({ ns, stop: stopNamespace } = await startControllerNamespace('drift'));
    await t.apply(vmClass(cls));
    const img = await t.apply(vmImage(image));
    prov = await t.apply(provider(ns, 'vcenter', 'vsphere'));
    await t.applyStatus(prov, failureDomains('vsphere', [{ name: 'fd-a' }, { name: 'fd-b' }]));
    await t.applyStatus(img, imageRows([{ ns, provider: 'vcenter', ready: true }]));
    for (const policy of ['automatic', 'manual', 'never']) {
      const v = await t.apply(vm(ns, policy, cls, image, { migrationPolicy: policy }));
      const m = await t.exists(machineRef('vsphere', ns, v.metadata.name));
      expect(m.spec?.failureDomain).toBe('fd-a');
      uids[policy] = m.metadata.uid ?? '';
    }
    // fd-a loses the storage class the VMs need.
    await t.applyStatus(prov, failureDomains('vsphere', [{ name: 'fd-a', storage: ['slow'] }, { name: 'fd-b' }]));
  });

  afterAll(async () => {
    await stopNamespace?.();
    await t.delete({ apiVersion: 'banlieue.io/v1alpha1', kind: 'VMClass', metadata: { name: cls } });
    await t.delete({ apiVersion: 'banlieue.io/v1alpha1', kind: 'VMImage', metadata: { name: image } });
  });

  it('recreates an automatic VM in a failure domain that fits', async () => {
    const m = await t.exists(machineRef('vsphere', ns, 'automatic'), (o) => o.spec?.failureDomain === 'fd-b');
    expect(m.metadata.uid).not.toBe(uids.automatic);
    const live = await t.condition(vm(ns, 'automatic', cls, image), 'PlacementValid', 'True');
    expect(live.status?.scheduled.failureDomain).toBe('fd-b');
  });

  it('surfaces drift on a manual VM and moves it only once annotated', async () => {
    const v = vm(ns, 'manual', cls, image, { migrationPolicy: 'manual' });
    const live = await t.condition(v, 'PlacementValid', 'False', 'FailureDomainChanged');
    expect(live.status?.conditions.find((c: { type: string }) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'PlacementInvalid' });
    expect((await t.get(machineRef('vsphere', ns, 'manual')))?.metadata.uid).toBe(uids.manual);
    await t.patch(v, { metadata: { annotations: { 'banlieue.io/migrate': 'true' } } });
    await t.exists(machineRef('vsphere', ns, 'manual'), (o) => o.spec?.failureDomain === 'fd-b');
    await t.condition(v, 'PlacementValid', 'True');
  });

  it('leaves a never VM where it is', async () => {
    const v = vm(ns, 'never', cls, image, { migrationPolicy: 'never' });
    // The automatic VM has moved by now, so the controller has seen the drift.
    await t.exists(machineRef('vsphere', ns, 'automatic'), (o) => o.spec?.failureDomain === 'fd-b');
    await t.condition(v, 'Scheduled', 'True');
    const m = await t.get(machineRef('vsphere', ns, 'never'));
    expect(m?.metadata.uid).toBe(uids.never);
    expect(m?.spec?.failureDomain).toBe('fd-a');
    // `never` keeps the VM and reports its placement as the one that holds
    // (a missing condition is a failure, not a pass).
    const placementValid = (await t.get(v))?.status?.conditions?.find((c: { type: string }) => c.type === 'PlacementValid') as unknown;
    expect(placementValid).toMatchObject({ status: 'True', reason: 'PlacementMatches' });
  });
});
