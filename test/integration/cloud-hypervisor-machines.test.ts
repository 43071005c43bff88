// VirtualMachines on Cloud Hypervisor end to end: `banlieue controller` and
// `banlieue provider cloud-hypervisor` as processes, the real API server in
// between, the VMM simulator as the VMM (one process per machine, started
// detached by the provider), taps and bridges only in a network namespace the
// test made. What users see is read through the API; what the host has is read
// from the state root, /proc and the namespace.
import { KubeConfig } from '@kubernetes/client-node';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findVmmProcess } from '../../controller/backends/cloud-hypervisor/host-process.js';
import { tapName } from '../../controller/backends/cloud-hypervisor/machine/nic-identity.js';
import { readPidFile, vmmPaths } from '../../controller/backends/cloud-hypervisor/state-dir.js';
import { KubeApi } from '../../controller/runtime/kube-api.js';
import { machineDirs } from '../support/cloud-hypervisor/host.js';
import { chMachines, chUuidOf, chVm, startChEnv, startChProvider, stopChEnv, type ChEnv } from '../support/cloud-hypervisor/env.js';
import { TestApi, machineRef, vm, type Obj } from '../support/fixtures.js';
import { waitFor } from '../support/wait.js';
import { eventsRegarding, eventsWith } from '../support/events.js';

const t = new TestApi();

async function uuidOfMachine(env: ChEnv, name: string): Promise<string> {
  const machine = await t.exists(machineRef('cloud-hypervisor', env.ns, name), (o) => typeof o.spec?.providerID === 'string', 60_000);
  return chUuidOf(machine.spec?.providerID as string);
}

async function vmmPid(env: ChEnv, uuid: string): Promise<number | undefined> {
  const paths = vmmPaths(env.host.config.stateRoot, uuid);
  return (await findVmmProcess(await readPidFile(paths), paths.apiSocket))?.pid;
}

const ready = (env: ChEnv, name: string): Promise<Obj> => t.condition(vm(env.ns, name, '', ''), 'Ready', 'True', 'Reconciled', 120_000);

describe('VirtualMachines on Cloud Hypervisor (simulator)', () => {
  let env: ChEnv;

  beforeAll(async () => {
    env = await startChEnv('ch-vm', { asHost: true });
  }, 180_000);
  afterAll(async () => {
    const violations = env?.host.violations();
    await stopChEnv(env);
    expect(violations).toEqual([]);
  }, 240_000);

  it('publishes the host as one failure domain and the image as ready on it', async () => {
    const provider = await t.condition(env.world.provider, 'Ready', 'True', 'Reconciled', 60_000);
    expect(provider.status?.failureDomains).toMatchObject([
      { name: 'host-a', labels: { host: 'testhost' }, attributes: { availableStorageClasses: ['fast'], availableNetworkClasses: ['lan'] } },
    ]);
    const reachable = provider.status?.conditions?.find((c: { type: string }) => c.type === 'ProviderReachable');
    expect(reachable?.status).toBe('True');
    const image = await t.exists(env.world.vmImage, (o) => (o.status?.perProvider as { ready?: boolean }[] | undefined)?.some((r) => r.ready) === true, 60_000);
    expect(image.status?.perProvider).toMatchObject([
      { providerName: 'host-a', providerNamespace: env.ns, ready: true, resolvedRef: join(env.host.config.imageDir, 'halt.raw') },
    ]);
  });

  it("runs as the host's own identity, which may write its own Provider's status and no other's", async () => {
    const kc = new KubeConfig();
    kc.loadFromFile(env.kubeconfig);
    const host = new KubeApi(kc);
    const patchStatus = (name: string): Promise<string> =>
      host
        .request('PATCH', `/apis/banlieue.io/v1alpha1/namespaces/${env.ns}/providers/${name}/status`, { body: {}, contentType: 'application/merge-patch+json' })
        .then(
          () => 'allowed',
          (err: { code?: number }) => (err.code === 403 ? 'forbidden' : `HTTP ${String(err.code)}`),
        );
    expect(await patchStatus('host-a')).toBe('allowed');
    expect(await patchStatus('host-b')).toBe('forbidden');
    const otherNamespace = await host.request('GET', '/apis/infrastructure.banlieue.io/v1alpha1/namespaces/default/cloudhypervisormachines').then(
      () => 'allowed',
      (err: { code?: number }) => (err.code === 403 ? 'forbidden' : `HTTP ${String(err.code)}`),
    );
    expect(otherNamespace).toBe('forbidden');
  });

  it('runs a VirtualMachine: Ready with its static address, one VMM process, its tap on the bridge', async () => {
    await t.apply(chVm(env, 'web-1', '10.88.0.11'));
    const running = await ready(env, 'web-1');
    expect(running.status?.addresses).toEqual([{ type: 'InternalIP', address: '10.88.0.11' }]);
    expect(running.status?.observedPowerState).toBe('PoweredOn');

    const machine = await t.get(machineRef('cloud-hypervisor', env.ns, 'web-1'));
    expect(machine?.spec?.providerID).toMatch(/^cloudhypervisor:\/\/[0-9a-f-]{36}$/);
    expect(machine?.status).toMatchObject({ initialization: { provisioned: true }, hostUid: 'testhost', addressSource: 'static', failureDomain: 'host-a' });
    const uuid = chUuidOf(machine?.spec?.providerID as string);
    expect(await vmmPid(env, uuid)).toBeGreaterThan(0);
    expect(await env.host.links()).toContain(tapName(uuid, 0));
    expect((await eventsWith(t.api, env.ns, 'web-1', ['Created', 'PoweredOn'])).map((e) => e.reason)).toEqual(expect.arrayContaining(['Created', 'PoweredOn']));
  });

  it('drives spec.desiredPowerState: off (the VMM stopped), then on again (started from its saved config)', async () => {
    const uuid = await uuidOfMachine(env, 'web-1');
    await t.apply(chVm(env, 'web-1', '10.88.0.11', { desiredPowerState: 'PoweredOff' }));
    await t.exists(vm(env.ns, 'web-1', '', ''), (o) => o.status?.observedPowerState === 'PoweredOff', 120_000);
    await waitFor('the VMM to be stopped', async () => ((await vmmPid(env, uuid)) === undefined ? true : undefined), 60_000);

    await t.apply(chVm(env, 'web-1', '10.88.0.11', { desiredPowerState: 'PoweredOn' }));
    await t.exists(vm(env.ns, 'web-1', '', ''), (o) => o.status?.observedPowerState === 'PoweredOn', 120_000);
    await ready(env, 'web-1');
    expect(await vmmPid(env, uuid)).toBeGreaterThan(0);
    expect(machineDirs(env.host)).toEqual([uuid]);
  });

  it('deleting the VirtualMachine removes its VMM process, socket, tap and disks', async () => {
    const uuid = await uuidOfMachine(env, 'web-1');
    const paths = vmmPaths(env.host.config.stateRoot, uuid);
    const pid = await readPidFile(paths);
    await t.delete(vm(env.ns, 'web-1', '', ''));
    await t.gone(machineRef('cloud-hypervisor', env.ns, 'web-1'), 120_000);
    await t.gone(vm(env.ns, 'web-1', '', ''), 60_000);
    expect(await findVmmProcess(pid, paths.apiSocket)).toBeUndefined();
    expect(existsSync(paths.apiSocket)).toBe(false);
    expect(existsSync(paths.dir)).toBe(false);
    expect(existsSync(join(env.host.config.storageClasses.fast ?? '', uuid))).toBe(false);
    expect(await env.host.links()).not.toContain(tapName(uuid, 0));
    expect((await eventsWith(t.api, env.ns, 'web-1', ['Deleted'])).map((e) => e.reason)).toContain('Deleted');
    // Everything above ran under the host's own identity: nothing it needed was refused.
    expect(env.provider.logs()).not.toMatch(/forbidden/i);
  });
});

describe('Cloud Hypervisor provider restart', () => {
  let env: ChEnv;
  const names = Array.from({ length: 5 }, (_, i) => `fleet-${i}`);

  // Machines are re-read every 3 s, so a VMM killed behind the provider's back is seen soon.
  beforeAll(async () => {
    env = await startChEnv('ch-restart', { providerFlags: ['--resync-period', '3'] });
  }, 180_000);
  afterAll(async () => {
    const violations = env?.host.violations();
    await stopChEnv(env);
    expect(violations).toEqual([]);
  }, 240_000);

  it('a SIGKILLed provider leaves 5 VMMs running; restarted, it re-adopts them: no duplicate, statuses unchanged', async () => {
    await Promise.all(names.map((name, i) => t.apply(chVm(env, name, `10.88.1.${i + 10}`))));
    await Promise.all(names.map((name) => ready(env, name)));
    const uuids = await Promise.all(names.map((name) => uuidOfMachine(env, name)));
    const pids = await Promise.all(uuids.map((uuid) => vmmPid(env, uuid)));
    expect(pids.every((pid) => pid !== undefined && pid > 0)).toBe(true);
    const before = (await chMachines(env.ns)).map((m) => [m.metadata.name, m.status]);

    await env.provider.kill();
    expect(await Promise.all(uuids.map((uuid) => vmmPid(env, uuid)))).toEqual(pids);
    env.provider = await startChProvider(env, ['--resync-period', '3']);
    // Every machine passed through the new provider (twice: a resync), and it changed nothing.
    await waitFor(
      'the new provider to look at every machine twice',
      async () => ((await env.provider.metric('banlieue_backend_calls_total', { method: 'ensure', outcome: 'ok' })) >= 2 * names.length ? true : undefined),
      120_000,
    );
    expect(await Promise.all(uuids.map((uuid) => vmmPid(env, uuid)))).toEqual(pids);
    expect(machineDirs(env.host).sort()).toEqual([...uuids].sort());
    expect((await chMachines(env.ns)).map((m) => [m.metadata.name, m.status])).toEqual(before);
    expect(await env.provider.metric('banlieue_backend_calls_total', { outcome: 'fault' })).toBe(0);
  }, 300_000);

  it('a VMM killed behind the provider is reported (status.lastVmmExit, a Warning Event) and started again (desiredPowerState PoweredOn)', async () => {
    const uuid = await uuidOfMachine(env, 'fleet-0');
    const pid = await vmmPid(env, uuid);
    if (pid === undefined) throw new Error('fleet-0 has no VMM');
    process.kill(pid, 'SIGKILL');
    const machine = await t.exists(machineRef('cloud-hypervisor', env.ns, 'fleet-0'), (o) => typeof o.status?.lastVmmExit === 'string', 120_000);
    expect(machine.status?.lastVmmExit).toMatch(
      /the VMM exited without banlieue stopping it; started again from its saved config \(desiredPowerState PoweredOn\)/,
    );
    const warning = await waitFor(
      'a VMRestarted Warning Event on the machine',
      async () =>
        (await eventsRegarding(t.api, env.ns, 'fleet-0')).find(
          (e) => e.type === 'Warning' && e.reason === 'VMRestarted' && e.regarding?.kind === 'CloudHypervisorMachine',
        ),
      60_000,
    );
    expect(warning.note).toContain(`VM with UUID ${uuid}: the VMM exited without banlieue stopping it`);
    const restarted = await waitFor(
      'a new VMM for fleet-0',
      async () => {
        const now = await vmmPid(env, uuid);
        return now !== undefined && now !== pid ? now : undefined;
      },
      60_000,
    );
    expect(restarted).toBeGreaterThan(0);
    await ready(env, 'fleet-0');
    expect(machineDirs(env.host)).toHaveLength(names.length);
  }, 180_000);
});
