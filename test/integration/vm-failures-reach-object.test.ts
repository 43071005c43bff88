// Every failure reaches the object, against the real API server with
// `banlieue controller` running: a VirtualMachine name longer than a label
// value, or than leaves room for `-user-data`, does not break the objects made
// for it, and a write the API server refuses is reported on the VM in the API
// server's words, not only logged while the VM says it is pending.
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { auditOffset, countWrites } from '../support/audit-writes.js';
import { startControllerNamespace } from '../support/kube.js';
import { waitFor } from '../support/wait.js';
import { TestApi, failureDomains, imageRows, machineRef, provider, vm, vmClass, vmImage, type Obj } from '../support/fixtures.js';

const WAIT_MS = 120_000;

/** A Secret as the API server returns it: its owners named by uid. */
interface OwnedSecret {
  readonly metadata: { readonly name: string; readonly ownerReferences?: readonly { readonly uid: string }[] };
  readonly type?: string;
}

describe('VirtualMachine failures on the object', () => {
  const t = new TestApi();
  let ns: string;
  let stopNamespace: () => Promise<void>;
  const suffix = Math.random().toString(36).slice(2, 7);
  const cls = `small-${suffix}`;
  const image = `ubuntu-${suffix}`;

  beforeAll(async () => {
    ({ ns, stop: stopNamespace } = await startControllerNamespace('vm-failures'));
    await t.apply(vmClass(cls));
    const img = await t.apply(vmImage(image));
    const p = await t.apply(provider(ns, 'vsphere', 'vsphere'));
    await t.applyStatus(p, failureDomains('vsphere', [{ name: 'vsphere-a' }]));
    await t.applyStatus(img, imageRows([{ ns, provider: 'vsphere', ready: true }]));
  }, WAIT_MS);

  afterAll(async () => {
    await stopNamespace?.();
    await t.delete({ apiVersion: 'banlieue.io/v1alpha1', kind: 'VMClass', metadata: { name: cls } });
    await t.delete({ apiVersion: 'banlieue.io/v1alpha1', kind: 'VMImage', metadata: { name: image } });
  }, WAIT_MS);

  it(
    'places a VM whose name is longer than a label value (63 characters)',
    async () => {
      const name = `web-${'a'.repeat(66)}`; // 70 characters
      const v = await t.apply(vm(ns, name, cls, image));
      await t.condition(v, 'Scheduled', 'True', 'Scheduled', WAIT_MS);
      const machine = (await t.get(machineRef('vsphere', ns, name))) as Obj;
      const owner = machine.metadata.labels?.['banlieue.io/owned-by'] ?? '';
      expect(owner.length).toBeLessThanOrEqual(63);
      expect(owner.startsWith('web-aaa')).toBe(true);
      expect((machine.metadata as { ownerReferences?: { name: string }[] }).ownerReferences?.[0]?.name).toBe(name);
    },
    WAIT_MS,
  );

  it(
    'renders the user-data Secret of a VM whose name leaves no room for `-user-data` (245 characters): its name is cut with a hash',
    async () => {
      const name = `web-${'b'.repeat(241)}`;
      await t.apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'long-source', namespace: ns }, stringData: { 'user-data': '#cloud-config\n' } });
      const v = await t.apply(vm(ns, name, cls, image, { userData: { secretRef: { name: 'long-source' } } }));
      // (A VSphereMachine takes no name over 80 characters, vCenter's limit: that one is refused, and said, after the Secret is made.)
      const rendered = await waitFor(
        'the rendered user-data Secret',
        async () => {
          const secrets = await t.api.request<{ items: OwnedSecret[] }>('GET', `/api/v1/namespaces/${ns}/secrets`);
          const owned = secrets.items.filter((o) => o.metadata.ownerReferences?.some((r) => r.uid === v.metadata.uid));
          return owned.length > 0 ? owned : undefined;
        },
        WAIT_MS,
      );
      expect(rendered.map((o) => o.metadata.name.length)).toEqual([253]);
      expect(rendered[0]?.type).toBe('banlieue.io/user-data');
    },
    WAIT_MS,
  );

  it(
    'says on the VM why the API server refused to create its user-data Secret',
    async () => {
      // 400 KB of user-data whose placeholders render to 1.6 MB: past the 1 MiB a Secret holds.
      const name = `web-${'c'.repeat(56)}`;
      const script = `#!/bin/sh\n${'echo ${VM_NAME}\n'.repeat(25_000)}`;
      await t.apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'big-source', namespace: ns }, stringData: { 'user-data': script } });
      const applied = auditOffset(inject('auditLogPath'));
      const v = await t.apply(vm(ns, name, cls, image, { userData: { secretRef: { name: 'big-source' } } }));
      const live = await t.condition(v, 'Scheduled', 'False', 'CreateRefused', WAIT_MS);
      // Said by the pass that was refused (or the one its own finalizer patch ran), not only by the retry a backoff later.
      expect(countWrites(inject('auditLogPath'), applied, { namespace: ns }).controller?.failedBy['create secrets 422']).toBeLessThanOrEqual(2);
      const scheduled = (live.status?.conditions as { type: string; message: string }[]).find((c) => c.type === 'Scheduled');
      expect(scheduled?.message).toContain(`Secret ${name}-user-data could not be created`);
      expect(scheduled?.message).toContain('1048576');
      expect(await t.get(machineRef('vsphere', ns, name))).toBeUndefined();
      // Said, then tried again on its backoff: not at each event of the status that says so (that ran many times a second).
      const from = auditOffset(inject('auditLogPath'));
      await delay(15_000);
      const writes = countWrites(inject('auditLogPath'), from, { namespace: ns }).controller?.total ?? 0;
      expect(writes).toBeLessThanOrEqual(4);
    },
    WAIT_MS,
  );
});
