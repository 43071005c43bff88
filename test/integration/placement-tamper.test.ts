// Placement changes never destroy silently. Where a VM runs is the
// infrastructure machine it controls: a `status.scheduled` written by someone
// else (`kubectl patch --subresource=status`, as anyone allowed the status
// subresource can) is restored from the machine with a Warning Event and moves
// nothing, on the VM or on a sibling its anti-affinity looks at. A placement
// made impossible (here: the user's failureDomainSelector now excludes it)
// under migrationPolicy automatic is announced, by a condition and an Event,
// before the machine is deleted.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { RoleProcess } from '../support/controller-process.js';
import { startControllerNamespace } from '../support/kube.js';
import { TestApi, failureDomains, imageRows, machineRef, provider, runningStatus, vm, vmClass, vmImage, type Obj } from '../support/fixtures.js';
import { waitFor } from '../support/wait.js';

const run = promisify(execFile);
const HOLD = 'test.banlieue.io/hold';

interface EventItem {
  reason: string;
  type: string;
  note: string;
  eventTime: string;
  regarding: { kind: string; name: string };
}

describe('VirtualMachine placement tampering', () => {
  const t = new TestApi();
  let ns: string;
  let stopNamespace: () => Promise<void>;
  let controller: RoleProcess;
  const suffix = Math.random().toString(36).slice(2, 7);
  const cls = `tamper-${suffix}`;
  const image = `tamper-${suffix}`;
  const held: Pick<Obj, 'apiVersion' | 'kind' | 'metadata'>[] = [];

  /** Providers in three groups so that each story moves only its own VMs. */
  beforeAll(async () => {
    ({ ns, controller, stop: stopNamespace } = await startControllerNamespace('tamper'));
    await t.apply(vmClass(cls));
    const img = await t.apply(vmImage(image));
    const groups: Record<string, string[]> = { tamper: ['prov-a', 'prov-b'], apart: ['apart'], drift: ['drift'] };
    const rows: { ns: string; provider: string; ready: boolean }[] = [];
    for (const [group, names] of Object.entries(groups)) {
      for (const name of names) {
        const p = await t.apply(provider(ns, name, 'vsphere', { group }));
        await t.applyStatus(p, failureDomains('vsphere', [{ name: 'fd-1' }, { name: 'fd-2' }]));
        rows.push({ ns, provider: name, ready: true });
      }
    }
    await t.applyStatus(img, imageRows(rows));
  });

  afterAll(async () => {
    for (const m of held) await t.patch(m, { metadata: { finalizers: null } }).catch(() => undefined);
    await stopNamespace?.();
    await t.delete({ apiVersion: 'banlieue.io/v1alpha1', kind: 'VMClass', metadata: { name: cls } });
    await t.delete({ apiVersion: 'banlieue.io/v1alpha1', kind: 'VMImage', metadata: { name: image } });
  });

  const inGroup = (group: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
    placement: { providerSelector: { matchLabels: { group } }, ...extra },
  });

  /** `kubectl patch --subresource=status --type=merge`, as an admin (or anyone allowed VirtualMachine status) would. */
  const patchStatus = async (name: string, status: Record<string, unknown>): Promise<void> => {
    await run(inject('kubectl'), [
      '--kubeconfig',
      inject('kubeconfig'),
      '-n',
      ns,
      'patch',
      'virtualmachines.banlieue.io',
      name,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status }),
    ]);
  };

  const events = async (name: string): Promise<EventItem[]> => {
    const list = await t.api.request<{ items: EventItem[] }>('GET', `/apis/events.k8s.io/v1/namespaces/${ns}/events`);
    return list.items.filter((e) => e.regarding.kind === 'VirtualMachine' && e.regarding.name === name);
  };

  /** A VM placed by the controller, its machine reported running; returns the machine. */
  const running = async (v: Obj, where: { providerName: string; failureDomain: string }): Promise<Obj> => {
    await t.apply(v);
    const m = await t.exists(
      machineRef('vsphere', ns, v.metadata.name),
      (o) => o.spec?.providerRef?.name === where.providerName && o.spec?.failureDomain === where.failureDomain,
    );
    await t.applyStatus(m, runningStatus('192.0.2.20'));
    const ready = await t.condition(v, 'Ready', 'True');
    expect(ready.status?.scheduled).toMatchObject({ providerName: where.providerName, providerClass: 'vsphere', failureDomain: where.failureDomain });
    return m;
  };

  const deletions = (name: string): string[] =>
    controller
      .logs()
      .split('\n')
      .filter((l) => l.includes('Deleting infrastructure machine') && l.includes(`${ns}/${name}`));

  it('restores a status.scheduled written by someone else from the machine, with a Warning, and never deletes the machine', async () => {
    const v = vm(ns, 'forged', cls, image, inGroup('tamper'));
    const before = await running(v, { providerName: 'prov-a', failureDomain: 'fd-1' });

    await patchStatus('forged', { scheduled: { providerName: 'prov-b', failureDomain: 'fd-2' } });

    const restored = await waitFor('status.scheduled restored to prov-a/fd-1', async () => {
      const live = await t.get(v);
      return live?.status?.scheduled?.providerName === 'prov-a' && live.status.scheduled.failureDomain === 'fd-1' ? live : undefined;
    });
    expect(restored.status?.scheduled).toMatchObject({ providerClass: 'vsphere', resolvedStorage: [{ className: 'fast', backendId: 'fast-store' }] });
    const after = await t.get(machineRef('vsphere', ns, 'forged'));
    expect(after?.metadata.uid).toBe(before.metadata.uid);
    expect(after?.metadata.deletionTimestamp).toBeUndefined();
    expect(deletions('forged')).toEqual([]);

    const warning = await waitFor('a ScheduledRestored Event', async () => (await events('forged')).find((e) => e.reason === 'ScheduledRestored'));
    expect(warning.type).toBe('Warning');
    expect(warning.note).toContain('status.scheduled (prov-b/fd-2) does not match VSphereMachine forged, which runs the VirtualMachine on prov-a/fd-1');
    expect(warning.note).toContain('the VirtualMachine is not moved');
    expect((await t.get(v))?.status?.conditions?.find((c: { type: string }) => c.type === 'PlacementValid')).toMatchObject({ status: 'True' });
  });

  it('does not move a VM when the status of a sibling its anti-affinity looks at is forged', async () => {
    const term = inGroup('apart', { antiAffinity: [{ topologyKey: 'name', labelSelector: { matchLabels: { app: `apart-${suffix}` } }, mode: 'required' }] });
    const labels = { app: `apart-${suffix}` };
    const first = vm(ns, 'apart-1', cls, image, term, labels);
    const second = vm(ns, 'apart-2', cls, image, term, labels);
    const firstMachine = await running(first, { providerName: 'apart', failureDomain: 'fd-1' });
    const secondMachine = await running(second, { providerName: 'apart', failureDomain: 'fd-2' });
    // Paused, the sibling keeps the forged record: only its machine can say where it runs.
    await t.patch(second, { metadata: { annotations: { 'cluster.x-k8s.io/paused': 'true' } } });
    await t.condition(second, 'Paused', 'True');
    await patchStatus('apart-2', { scheduled: { failureDomain: 'fd-1' } });
    expect((await t.get(second))?.status?.scheduled.failureDomain).toBe('fd-1');

    // A spec change makes the controller decide for the first VM again while the sibling's record is forged.
    const changed = await t.patch(first, { spec: { desiredPowerState: 'PoweredOff' } });
    await waitFor('the first VM reconciled at its new generation', async () => {
      const live = await t.get(first);
      return live?.status?.observedGeneration === (changed.metadata as { generation?: number }).generation ? live : undefined;
    });
    const m = await t.exists(machineRef('vsphere', ns, 'apart-1'), (o) => o.spec?.desiredPowerState === 'PoweredOff');
    expect(m.metadata.uid).toBe(firstMachine.metadata.uid);
    expect(m.spec?.failureDomain).toBe('fd-1');
    expect(deletions('apart-1')).toEqual([]);
    expect((await t.get(machineRef('vsphere', ns, 'apart-2')))?.metadata.uid).toBe(secondMachine.metadata.uid);
  });

  it('announces a recreate, by condition and Event, before it deletes the machine of an automatic VM', async () => {
    const v = vm(ns, 'drifting', cls, image, { ...inGroup('drift'), migrationPolicy: 'automatic' });
    const before = await running(v, { providerName: 'drift', failureDomain: 'fd-1' });
    // As a provider role's finalizer would, hold the machine while it is deleted so the deletion can be seen.
    const ref = machineRef('vsphere', ns, 'drifting');
    await t.patch(ref, { metadata: { finalizers: [HOLD] } });
    held.push(ref);

    // The user asks for fd-2 only: where the VM runs is no longer allowed.
    await t.patch(v, { spec: { placement: { failureDomainSelector: { matchLabels: { name: 'fd-2' } } } } });

    const terminating = await t.exists(ref, (o) => !!o.metadata.deletionTimestamp);
    expect(terminating.metadata.uid).toBe(before.metadata.uid);
    // Seen terminating, the machine was already announced: an Event, and the condition on the VM.
    const announced = (await events('drifting')).find((e) => e.reason === 'Recreating');
    expect(announced).toMatchObject({ type: 'Warning' });
    expect(announced?.note).toContain(
      'spec.placement.failureDomainSelector name=fd-2 no longer matches failure domain drift/fd-1 it runs in: recreating it on drift/fd-2: VSphereMachine drifting on drift/fd-1 is deleted with its VM and disks, and a new VM is cloned from its image (migrationPolicy automatic)',
    );
    // deletionTimestamp has second precision.
    const deletedAt = Date.parse(terminating.metadata.deletionTimestamp ?? '');
    expect(Date.parse(`${announced?.eventTime.slice(0, 19) ?? ''}Z`)).toBeLessThanOrEqual(deletedAt);
    const live = await t.get(v);
    const placementValid = (live?.status?.conditions as { type: string; status: string; reason: string; message: string; lastTransitionTime: string }[]).find(
      (c) => c.type === 'PlacementValid',
    );
    expect(placementValid).toMatchObject({ status: 'False', reason: 'Recreating', message: announced?.note });
    expect(Date.parse(placementValid?.lastTransitionTime ?? '')).toBeLessThanOrEqual(deletedAt);
    // Until the old machine is gone, the record says where the VM still runs.
    expect(live?.status?.scheduled).toMatchObject({ providerName: 'drift', failureDomain: 'fd-1' });

    // Released, the machine goes and the VM is recreated where it fits.
    await t.patch(ref, { metadata: { finalizers: null } });
    const recreated = await t.exists(ref, (o) => o.metadata.uid !== before.metadata.uid && o.spec?.failureDomain === 'fd-2');
    expect(recreated.spec?.providerRef).toEqual({ name: 'drift' });
    await waitFor('status.scheduled at drift/fd-2', async () => ((await t.get(v))?.status?.scheduled?.failureDomain === 'fd-2' ? true : undefined));
    await t.condition(v, 'PlacementValid', 'True');
  });
});
