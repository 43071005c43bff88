// No retry storms: machines vCenter refuses back off to minutes instead of
// being tried again every few poll periods, and a name vCenter would refuse
// starts no clone at all. Measured as a user would: API writes from the API
// server's audit log, vCenter calls from the provider's
// banlieue_backend_calls_total, over one idle minute with a 2 s poll period
// (so a machine retried at the poll period would show). The minute ends within
// the provider's first --resync-period (300 s): that re-read of every machine
// (two calls each, once per five minutes) falls outside it.
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { auditOffset, countWrites, untilWritesSettle } from '../support/audit-writes.js';
import { backendCalls, callsSince, totalCalls as total } from '../support/backend-calls.js';
import { INFRA, TestApi, machineRef, vm, type Obj } from '../support/fixtures.js';
import { readyWithAddress, startVsphereEnv, stopVsphereEnv, type VsphereEnv } from '../support/vsphere/env.js';
import { IN_TEMPLATE_DATACENTER, vmsNamed } from '../support/vsphere/world.js';

const t = new TestApi();
const HEALTHY = 28;
const REFUSED = 2;
const MACHINES = HEALTHY + REFUSED;
const IDLE_MS = 60_000;

describe('vSphere machines at idle (no retry storms)', () => {
  let env: VsphereEnv;
  const audit = inject('auditLogPath');

  beforeAll(async () => {
    // The poll period the storm was seen with; discovery at its default.
    env = await startVsphereEnv('vsphere-idle', { providerFlags: ['--poll-period', '2', '--rediscover-period', '300'] });
  }, 180_000);
  afterAll(() => stopVsphereEnv(env), 300_000);

  const create = (name: string, extra: Record<string, unknown> = {}): Promise<Obj> =>
    t.apply(vm(env.ns, name, env.world.vmClass.metadata.name, env.world.vmImage.metadata.name, extra));

  it('starts no clone for a name longer than vCenter takes: admission refuses it, naming the field', async () => {
    // Written directly, as Cluster API would (a VirtualMachine's name is shorter); Kubernetes takes 253 characters.
    const name = `long-${'n'.repeat(80)}`;
    const failureDomain = (await t.get(env.world.provider))?.status?.failureDomains?.[0]?.name as string;
    const machine: Obj = {
      apiVersion: INFRA,
      kind: 'VSphereMachine',
      metadata: { name, namespace: env.ns },
      spec: { providerRef: { name: 'vcsim' }, failureDomain, template: env.world.vmImage.spec?.sources[0].ref, numCpus: 1, memoryMiB: 512 },
    };
    const refused = await t.apply(machine).then(
      () => undefined,
      (err: unknown) => (err instanceof Error ? err.message : String(err)),
    );
    expect(refused).toContain('metadata.name must be at most 80 characters');
    expect(await t.get(machine)).toBeUndefined();
    // vcsim would have cloned it: vCenter refuses such a name only once the task runs.
    expect(await vmsNamed(env.client, 'long-')).toEqual([]);
    expect((await backendCalls(env.provider)).CloneVM_Task ?? 0).toBe(0);
  });

  it(`makes at most 1 API write and 2 vCenter calls per machine in an idle minute, ${MACHINES} machines, ${REFUSED} of them refused by vCenter`, async () => {
    const healthy = Array.from({ length: HEALTHY }, (_, i) => `idle-${String(i).padStart(2, '0')}`);
    const refused = Array.from({ length: REFUSED }, (_, i) => `refused-${i}`);
    const inDc0 = { placement: IN_TEMPLATE_DATACENTER };
    await Promise.all(healthy.map((name) => create(name, inDc0)));
    // A folder vCenter does not have (its Provider publishes it): refused at every try until someone fixes the spec.
    await t.patch(env.world.provider, { spec: { allowedTargets: [{ kind: 'folder', names: ['no-such-folder'] }] } });
    await Promise.all(refused.map((name) => create(name, { ...inDc0, folder: 'no-such-folder' })));
    await Promise.all(healthy.map((name, i) => readyWithAddress(env, name, `10.60.0.${i + 10}`, 180_000)));
    for (const name of refused) {
      const machine = await t.condition(machineRef('vsphere', env.ns, name), 'Ready', 'False', 'ProvisionFailed', 60_000);
      expect(machine.status?.conditions?.find((c: { type: string }) => c.type === 'Ready')?.message).toContain('no-such-folder');
    }
    // Settled: the status writes that trail the last Ready are done.
    expect(await untilWritesSettle(audit, auditOffset(audit), 10_000, 120_000)).toBe(true);

    const from = auditOffset(audit);
    const before = await backendCalls(env.provider);
    // The measurement is a fixed window: an idle minute, by definition.
    await delay(IDLE_MS);
    const calls = callsSince(before, await backendCalls(env.provider));
    const writes = countWrites(audit, from);
    const writesTotal = Object.values(writes).reduce((sum, w) => sum + w.total, 0);
    console.log(
      `idle minute, ${MACHINES} machines (${REFUSED} refused): ${total(calls)} vCenter calls ${JSON.stringify(calls)}, ${writesTotal} API writes ${JSON.stringify(Object.fromEntries(Object.entries(writes).map(([role, w]) => [role, w.byResource])))}`,
    );

    expect(writesTotal).toBeLessThanOrEqual(MACHINES);
    expect(total(calls)).toBeLessThanOrEqual(2 * MACHINES);
    expect(calls.CloneVM_Task ?? 0).toBe(0);
    expect(await vmsNamed(env.client, 'refused-')).toEqual([]);
  }, 600_000);
});
