// `banlieue vm restart` and `stop`/`start` against a VM on libvirt: the CLI as a user runs it,
// the controller and `banlieue provider libvirt` as processes, a private libvirtd (test driver)
// as the host. The test reads what the user sees (the VirtualMachine's status, Events) and, as
// virsh would, the domain: a domain's id is new on every start, so a changed id is a new boot.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainState } from '../../controller/backends/libvirt/client/constants.js';
import type { Domain } from '../../controller/backends/libvirt/client/handles.js';
import { TestApi, vm, type Obj } from '../support/fixtures.js';
import { backendCalls, callsSince } from '../support/backend-calls.js';
import { banlieueVm } from '../support/cli-process.js';
import { eventsWith } from '../support/events.js';
import { domainOf, libvirtUuidOf, libvirtVm, startLibvirtEnv, stopLibvirtEnv, type LibvirtEnv } from '../support/libvirt/env.js';

const t = new TestApi();

describe('banlieue vm restart|stop|start on libvirt (test driver)', () => {
  let env: LibvirtEnv;
  let uuid: string;
  const web = (): Obj => vm(env.ns, 'web-1', '', '');
  const verb = (...args: string[]): ReturnType<typeof banlieueVm> => banlieueVm(env.ns, ...args);
  const domain = async (): Promise<Domain> => {
    const found = await domainOf(env.anchor, uuid);
    if (!found) throw new Error('web-1 has no domain');
    return found;
  };

  beforeAll(async () => {
    env = await startLibvirtEnv('libvirt-verbs');
    await t.apply(libvirtVm(env, 'web-1'));
    await t.condition(web(), 'Ready', 'True', 'Reconciled', 120_000);
    uuid = await libvirtUuidOf(env.ns, 'web-1');
  }, 300_000);
  afterAll(() => stopLibvirtEnv(env), 240_000);

  it('restart shuts the guest down (a shutdown request, not a destroy) and starts the domain again, once: a new boot, status.restart Restarted', async () => {
    const before = await domain();
    expect(before.id).toBeGreaterThan(0);
    const calls = await backendCalls(env.provider);

    const run = await verb('restart', 'web-1');
    expect(run.err).toBe('');
    expect(run.out).toContain(`VirtualMachine ${env.ns}/web-1: restart requested (spec.restartRequestedAt `);
    const requestedAt = (await t.get(web()))?.spec?.restartRequestedAt as string;

    const done = await t.exists(web(), (o) => (o.status?.restart as { phase?: string } | undefined)?.phase === 'Restarted', 120_000);
    expect(done.status?.restart).toEqual({ requestedAt, phase: 'Restarted', lastTransitionTime: expect.any(String) });
    const after = await domain();
    expect((await env.anchor.domains.state(after)).state).toBe(DomainState.Running);
    // Started again: libvirt gives a running domain a new id on each start.
    expect(after.id).toBeGreaterThan(0);
    expect(after.id).not.toBe(before.id);
    const made = callsSince(calls, await backendCalls(env.provider));
    expect(made).toMatchObject({ DOMAIN_SHUTDOWN_FLAGS: 1, DOMAIN_CREATE_WITH_FLAGS: 1 });
    expect(made.DOMAIN_DESTROY_FLAGS).toBeUndefined();
    const events = await eventsWith(t.api, env.ns, 'web-1', ['Restarting', 'Restarted']);
    expect(events.filter((e) => e.reason === 'Restarted')).toHaveLength(1);
    await t.condition(web(), 'Ready', 'True', 'Reconciled', 60_000);
    // Ready again, the domain was not started a second time.
    expect((await domain()).id).toBe(after.id);
  }, 240_000);

  it('stop shuts the domain down and start boots it again', async () => {
    const before = await domain();
    expect((await verb('stop', 'web-1')).code).toBe(0);
    await t.exists(web(), (o) => o.status?.observedPowerState === 'PoweredOff', 60_000);
    expect((await env.anchor.domains.state(await domain())).state).toBe(DomainState.Shutoff);
    expect((await verb('start', 'web-1')).code).toBe(0);
    // Off was Ready too (as asked): wait for the power it now asks for.
    await t.exists(web(), (o) => o.status?.observedPowerState === 'PoweredOn', 60_000);
    const after = await domain();
    expect(after.id).not.toBe(before.id);
    expect((await env.anchor.domains.state(after)).state).toBe(DomainState.Running);
  }, 180_000);
});
