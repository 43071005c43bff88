// A running VM is a durable thing: routine changes around it never delete and
// re-clone it. The real controller and vSphere provider role on two vcsims
// (two vCenters); after each change a label put on the VM must reach its
// machine — so the controller has judged the VM against the change — and the
// machine must be the same object, its VM the same one in vcsim.
// Then the one case that may move a VM: its placement truly impossible (its
// Provider deleted) under migrationPolicy automatic, announced first, at most
// --max-recreates-per-minute VMs of the namespace per minute.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VsphereClient } from '../../controller/backends/vsphere/client/vsphere-client.js';
import { ConditionType, Reason } from '../../infra/api/conditions.js';
import { startVcsim, type Vcsim } from '../peers/vsphere/vcsim.js';
import { eventsRegarding } from '../support/events.js';
import { CORE, TestApi, machineRef, vm, type Obj } from '../support/fixtures.js';
import { providerIdOf, startVsphereEnv, stopVsphereEnv, type VsphereEnv } from '../support/vsphere/env.js';
import { IN_TEMPLATE_DATACENTER, makeTemplate, playTools, vcsimClient } from '../support/vsphere/world.js';
import { waitFor } from '../support/wait.js';

const t = new TestApi();
const RECREATES_PER_MINUTE = 5;
const POLICIES = ['default', 'automatic'] as const;

/** What must not change about a running VM. */
interface Kept {
  readonly machineUid: string;
  readonly providerID: string;
  readonly vmRef: string;
}

describe('a running VirtualMachine under routine change', () => {
  let env: VsphereEnv;
  let second: Vcsim;
  let secondClient: VsphereClient;
  let template: string;
  let cls: string;
  let image: string;
  const provider = (name: string): Obj => ({ apiVersion: CORE, kind: 'Provider', metadata: { name, namespace: env.ns } });

  beforeAll(async () => {
    env = await startVsphereEnv('stay', { controllerFlags: ['--max-recreates-per-minute', String(RECREATES_PER_MINUTE)] });
    template = (env.world.vmImage.spec?.sources as { ref: string }[])[0]?.ref ?? '';
    cls = env.world.vmClass.metadata.name ?? '';
    image = env.world.vmImage.metadata.name ?? '';
    // A second vCenter, with the same template, for a Provider that sorts before "vcsim".
    second = await startVcsim({ datacenters: 1, clusters: 2 });
    secondClient = await vcsimClient(second);
    await makeTemplate(secondClient, template);
    await t.apply({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'second-creds', namespace: env.ns },
      stringData: { username: second.username, password: second.password },
    });
  });

  afterAll(async () => {
    await stopVsphereEnv(env);
    await secondClient?.close();
    await second?.stop();
  });

  /** Labels `name`'s Provider with `labels` (merged; null removes). */
  const label = (name: string, labels: Record<string, string | null>): Promise<Obj> => t.patch(provider(name), { metadata: { labels } });

  /** A Provider "aaa" on the second vcsim, sorting first, Ready and with the image ready on it. */
  async function addSecondProvider(labels: Record<string, string>): Promise<void> {
    const base = env.world.provider;
    const spec = base.spec as { connection: Record<string, unknown> };
    await t.apply({
      ...base,
      metadata: { name: 'aaa', namespace: env.ns, labels },
      spec: { ...spec, connection: { ...spec.connection, endpoint: second.url, credentialsRef: { name: 'second-creds' }, caBundle: { inline: second.caPem } } },
    });
    await t.condition(provider('aaa'), ConditionType.Ready, 'True', Reason.Reconciled, 60_000);
    await imageReadyOn('aaa');
  }

  async function imageReadyOn(name: string): Promise<void> {
    await t.exists(
      env.world.vmImage,
      (o) => ((o.status?.perProvider ?? []) as { providerName: string; ready: boolean }[]).some((r) => r.providerName === name && r.ready),
      60_000,
    );
  }

  /** Two VMs (default and automatic migrationPolicy) selecting Providers labelled `selector`, Ready. */
  async function runVms(prefix: string, selector: Record<string, string>, client: VsphereClient): Promise<Map<string, Kept>> {
    const kept = new Map<string, Kept>();
    for (const policy of POLICIES) {
      const name = `${prefix}-${policy}`;
      await t.apply(
        vm(env.ns, name, cls, image, {
          placement: { providerSelector: { matchLabels: selector } },
          ...(policy === 'automatic' ? { migrationPolicy: 'automatic' } : {}),
        }),
      );
      kept.set(name, await readyOn(client, name));
    }
    return kept;
  }

  /** Plays VMware Tools for `name` in `client`'s vcsim until the VirtualMachine is Ready; what identifies it then. */
  async function readyOn(client: VsphereClient, name: string): Promise<Kept> {
    const uuid = await providerIdOf(env.ns, name, 60_000);
    await waitFor(`VM ${name} in vcsim`, async () => ((await playTools(client, uuid, '10.0.0.9')) ? true : undefined), 60_000);
    await t.condition(vm(env.ns, name, '', ''), ConditionType.Ready, 'True', Reason.Reconciled, 60_000);
    const machine = await t.exists(machineRef('vsphere', env.ns, name), (m) => typeof m.status?.vmRef === 'string');
    return { machineUid: machine.metadata.uid ?? '', providerID: machine.spec?.providerID as string, vmRef: machine.status?.vmRef as string };
  }

  /**
   * After a change: each VM judged against it (a label put on the VM reaches its machine, which the
   * controller writes from the VM), and nothing moved: same machine, same VM in vcsim, PlacementValid True.
   */
  async function expectKept(
    kept: ReadonlyMap<string, Kept>,
    client: VsphereClient,
    step: string,
    placementValid: Reason = Reason.PlacementMatches,
  ): Promise<void> {
    for (const [name, before] of kept) {
      await t.patch(vm(env.ns, name, '', ''), { metadata: { labels: { 'test.banlieue.io/step': step } } });
      const machine = await t.exists(machineRef('vsphere', env.ns, name), (m) => m.metadata.labels?.['test.banlieue.io/step'] === step, 60_000);
      expect({ name, uid: machine.metadata.uid, providerID: machine.spec?.providerID, vmRef: machine.status?.vmRef }).toEqual({
        name,
        uid: before.machineUid,
        providerID: before.providerID,
        vmRef: before.vmRef,
      });
      expect(await client.search.findVmByBiosUuid(before.providerID.replace('vsphere://', ''))).toEqual(expect.objectContaining({ value: before.vmRef }));
      const live = await t.condition(vm(env.ns, name, '', ''), ConditionType.PlacementValid, 'True', placementValid, 60_000);
      expect(live.metadata.name).toBe(name);
    }
  }

  it('keeps its machine and its VM when a Provider that sorts first appears and fits', async () => {
    await label('vcsim', { a: 'yes' });
    const kept = await runVms('new-provider', { a: 'yes' }, env.client);
    await addSecondProvider({ a: 'yes' });
    await expectKept(kept, env.client, 'new-provider');
  });

  it('keeps its machine and its VM when a failure domain that sorts first appears', async () => {
    await label('vcsim', { b: 'yes' });
    const kept = await runVms('new-fd', { b: 'yes' }, env.client);
    const domains = await failureDomainsOf('vcsim');
    const runsIn = (await t.get(machineRef('vsphere', env.ns, 'new-fd-default')))?.spec?.failureDomain as string;
    const other = domains.find((fd) => fd.name !== runsIn);
    if (!other) throw new Error('vcsim publishes one failure domain only');
    // The admin renames another cluster's failure domain: a new one, sorting before every other.
    await t.patch(provider('vcsim'), {
      spec: { failureDomainNameOverrides: [{ datacenter: other.raw.datacenter, cluster: other.raw.cluster, name: '0-first' }] },
    });
    await waitFor('failure domain 0-first', async () => ((await failureDomainsOf('vcsim')).some((fd) => fd.name === '0-first') ? true : undefined), 60_000);
    await expectKept(kept, env.client, 'new-fd');
    await withoutOverrides('0-first');
  });

  it('keeps its machine and its VM, saying so, when the failure domain it runs in is withdrawn', async () => {
    await label('vcsim', { c: 'yes' });
    const kept = await runVms('withdrawn', { c: 'yes' }, env.client);
    const runsIn = (await t.get(machineRef('vsphere', env.ns, 'withdrawn-default')))?.spec?.failureDomain as string;
    const home = (await failureDomainsOf('vcsim')).find((fd) => fd.name === runsIn);
    if (!home) throw new Error(`vcsim does not publish ${runsIn}`);
    // Its cluster no longer published under that name: the failure domain is gone from the Provider, the VM reachable.
    await t.patch(provider('vcsim'), {
      spec: { failureDomainNameOverrides: [{ datacenter: home.raw.datacenter, cluster: home.raw.cluster, name: 'renamed' }] },
    });
    await waitFor(
      `failure domain ${runsIn} withdrawn`,
      async () => ((await failureDomainsOf('vcsim')).some((fd) => fd.name === runsIn) ? undefined : true),
      60_000,
    );
    await expectKept(kept, env.client, 'withdrawn', Reason.FailureDomainWithdrawn);
    await withoutOverrides('renamed');
  });

  it("keeps its machine and its VM when its Provider's labels stop matching its selector and another Provider's start to", async () => {
    await label('vcsim', { d: 'yes' });
    const kept = await runVms('relabelled', { d: 'yes' }, env.client);
    await label('aaa', { d: 'yes' });
    await label('vcsim', { d: null });
    await expectKept(kept, env.client, 'relabelled');
  });

  it('keeps its machine and its VM when its VMImage stops being ready on its Provider', async () => {
    await label('vcsim', { e: 'yes' });
    await label('aaa', { e: 'yes' });
    // Both fit: the VMs go to "aaa", which sorts first.
    const kept = await runVms('image-gone', { e: 'yes' }, secondClient);
    const [dc] = await secondClient.inventory.datacenters();
    const templateRef = dc && (await secondClient.vms.findNamed(dc.vmFolder, template, { templatesOnly: true }));
    if (!templateRef) throw new Error('the second vcsim has no template');
    await secondClient.vms.destroy(templateRef);
    await t.exists(
      env.world.vmImage,
      (o) => ((o.status?.perProvider ?? []) as { providerName: string; ready: boolean }[]).some((r) => r.providerName === 'aaa' && !r.ready),
      60_000,
    );
    await expectKept(kept, secondClient, 'image-gone');
    await makeTemplate(secondClient, template);
    await imageReadyOn('aaa');
    // Gone before the next case deletes their Provider.
    for (const name of kept.keys()) await t.delete(vm(env.ns, name, '', ''));
    for (const name of kept.keys()) await t.gone(vm(env.ns, name, '', ''), 60_000);
  });

  it('recreates VMs whose Provider is deleted under migrationPolicy automatic, each announced first, at most the allowed number per minute', async () => {
    await label('aaa', { f: 'yes' });
    await label('vcsim', { f: 'yes' });
    const names = Array.from({ length: 10 }, (_, i) => `moved-${i}`);
    const before = new Map<string, Kept>();
    for (const name of names) {
      const placement = { providerSelector: { matchLabels: { f: 'yes' } }, ...IN_TEMPLATE_DATACENTER };
      await t.apply(vm(env.ns, name, cls, image, { placement, migrationPolicy: 'automatic' }));
      before.set(name, await readyOn(secondClient, name));
    }
    await t.delete(provider('aaa'));
    // Each VM ends on vcsim, as a new machine with a new VM; its old VM is gone from the second vcsim.
    for (const name of names) {
      const moved = await t.exists(
        machineRef('vsphere', env.ns, name),
        (m) => m.metadata.uid !== before.get(name)?.machineUid && m.spec?.providerRef?.name === 'vcsim',
        240_000,
      );
      expect(moved.spec?.failureDomain).toMatch(/^vcsim-/);
      await readyOn(env.client, name);
      const old = before.get(name)?.providerID.replace('vsphere://', '') ?? '';
      await waitFor(`old VM of ${name} deleted`, async () => ((await secondClient.search.findVmByBiosUuid(old)) ? undefined : true), 60_000);
    }
    // Each was announced (condition and Warning Event naming both placements) before its machine went.
    const announced: number[] = [];
    for (const name of names) {
      const recreating = (await eventsRegarding(t.api, env.ns, name)).filter((e) => e.reason === Reason.Recreating);
      expect(recreating.length, `Recreating Events of ${name}`).toBeGreaterThan(0);
      expect(recreating[0]?.note).toMatch(/recreating it on vcsim\/vcsim-.+: VSphereMachine moved-\d on aaa\/aaa-.+ is deleted with its VM and disks/);
      announced.push(...(await recreatingTimes(name)));
    }
    // The bound, read off the announcements' own times: no more than the limit in any minute (5 s for Event recording).
    announced.sort((a, b) => a - b);
    for (let i = 0; i + RECREATES_PER_MINUTE < announced.length; i++) {
      expect((announced[i + RECREATES_PER_MINUTE] ?? 0) - (announced[i] ?? 0)).toBeGreaterThanOrEqual(55_000);
    }
    expect(announced.length).toBeGreaterThanOrEqual(names.length);
    await t.gone(provider('aaa'), 60_000);
  }, 600_000);

  /** The admin drops the failure-domain name overrides; the next cases start once `name` is no longer published. */
  async function withoutOverrides(name: string): Promise<void> {
    await t.patch(provider('vcsim'), { spec: { failureDomainNameOverrides: null } });
    await waitFor(`failure domain ${name} gone`, async () => ((await failureDomainsOf('vcsim')).some((fd) => fd.name === name) ? undefined : true), 60_000);
  }

  async function failureDomainsOf(name: string): Promise<{ name: string; raw: { datacenter: string; cluster: string } }[]> {
    const live = await t.get(provider(name));
    return ((live?.status?.failureDomains ?? []) as { name: string; attributes?: { raw?: { datacenter: string; cluster: string } } }[]).map((fd) => ({
      name: fd.name,
      raw: fd.attributes?.raw ?? { datacenter: '', cluster: '' },
    }));
  }

  /** When the controller announced recreating `name` (its Events' eventTime). */
  async function recreatingTimes(name: string): Promise<number[]> {
    const list = await t.api.request<{ items: { reason: string; eventTime?: string; regarding?: { name?: string } }[] }>(
      'GET',
      `/apis/events.k8s.io/v1/namespaces/${env.ns}/events`,
    );
    return list.items.filter((e) => e.regarding?.name === name && e.reason === Reason.Recreating && e.eventTime).map((e) => Date.parse(e.eventTime ?? ''));
  }
});
