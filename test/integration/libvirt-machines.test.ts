// VirtualMachines on libvirt end to end: `banlieue controller` and `banlieue
// provider libvirt` as processes, a private libvirtd (test driver, reached
// over mutual TLS) as the host, the real API server in between. The test
// reads the host through its own connection, as an operator's virsh would.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainState, XmlFlags } from '../../controller/backends/libvirt/client/constants.js';
import { ownerMarkOf } from '../../controller/backends/libvirt/machine/domain-xml.js';
import { volumePrefix } from '../../controller/backends/libvirt/machine/volumes.js';
import { LIBVIRT_MAX_DOMAIN_NAME_LENGTH } from '../../infra/api/infrastructure.banlieue.io/v1alpha1/libvirt-machine.js';
import { TestApi, machineRef, vm } from '../support/fixtures.js';
import {
  domainOf,
  domainsNamed,
  libvirtUuidOf,
  libvirtVm,
  startLibvirtEnv,
  startLibvirtProvider,
  stopLibvirtEnv,
  volumesOf,
  type LibvirtEnv,
} from '../support/libvirt/env.js';
import { waitFor } from '../support/wait.js';
import { eventsRegarding, eventsWith, type EventSeen } from '../support/events.js';

const t = new TestApi();

const events = (ns: string, name: string): Promise<EventSeen[]> => eventsRegarding(t.api, ns, name);

describe('VirtualMachines on libvirt (test driver)', () => {
  let env: LibvirtEnv;

  beforeAll(async () => {
    env = await startLibvirtEnv('libvirt-vm');
  }, 240_000);
  afterAll(() => stopLibvirtEnv(env), 240_000);

  const ready = (name: string) => t.condition(vm(env.ns, name, '', ''), 'Ready', 'True', 'Reconciled', 120_000);

  it('provisions a VirtualMachine: a domain defined with its UUID, mark and shape, overlay disks and a seed, Ready with its address', async () => {
    await t.apply({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'web-user-data', namespace: env.ns },
      stringData: { 'user-data': '#cloud-config\nhostname: ${VM_NAME}\n' },
    });
    await t.apply(libvirtVm(env, 'web-1', { userData: { secretRef: { name: 'web-user-data' } } }));
    const done = await ready('web-1');
    // The test driver's lease source: 192.168.122.x for a NIC on a libvirt network.
    expect(done.status?.addresses).toEqual([{ type: 'InternalIP', address: expect.stringMatching(/^192\.168\.122\.\d+$/) }]);
    expect(done.status?.observedPowerState).toBe('PoweredOn');

    const machine = await t.get(machineRef('libvirt', env.ns, 'web-1'));
    const uuid = await libvirtUuidOf(env.ns, 'web-1');
    expect(machine?.spec?.providerID).toBe(`libvirt://${uuid}`);
    expect(machine?.status).toMatchObject({
      initialization: { provisioned: true },
      observedPowerState: 'PoweredOn',
      domainUuid: uuid,
      addressSource: 'dhcpLease',
    });
    expect(machine?.metadata.finalizers).toContain('banlieue.io/libvirtmachine');

    const domain = await domainOf(env.anchor, uuid);
    if (!domain) throw new Error('no domain with the providerID UUID');
    expect(domain.name).toBe(`${env.ns}-web-1`);
    expect((await env.anchor.domains.state(domain)).state).toBe(DomainState.Running);
    expect(await env.anchor.domains.info(domain)).toMatchObject({ vcpus: 2, maxMemoryKiB: 1024 * 1024 });
    const xml = await env.anchor.domains.xmlDesc(domain, XmlFlags.Inactive);
    expect(ownerMarkOf(xml)).toBe(`LibvirtMachine/${env.ns}/web-1`);
    expect(xml).toMatch(/<mac address='02(:[0-9a-f]{2}){5}'\/>/);
    // Named by the UUID and the machine's mark.
    const prefix = volumePrefix({ uuid, owner: { kind: 'LibvirtMachine', namespace: env.ns, name: 'web-1' } });
    expect(prefix).toMatch(new RegExp(`^${uuid}-[0-9a-f]{20}-$`));
    expect(xml).toContain(`volume='${prefix}os.qcow2'`);
    expect(xml).toContain(`volume='${prefix}cidata.iso'`);

    expect(await volumesOf(env.anchor, env.pool, uuid)).toEqual([`${prefix}cidata.iso`, `${prefix}data.qcow2`, `${prefix}os.qcow2`]);
    const os = await env.anchor.volumes.xmlDesc(await env.anchor.volumes.lookupByName(env.pool, `${prefix}os.qcow2`));
    expect(os).toContain('<backingStore>');
    expect(os).toContain('debian-12-genericcloud.qcow2');
    expect((await eventsWith(t.api, env.ns, 'web-1', ['Created', 'GuestDataWritten', 'PoweredOn'])).map((e) => e.reason)).toEqual(
      expect.arrayContaining(['Created', 'GuestDataWritten', 'PoweredOn']),
    );
  }, 180_000);

  it('runs a LibvirtMachine named with 253 characters: its domain name is cut to what libvirt can name files after', async () => {
    // A machine as CAPI would make it (no domainName): web-1's spec, with no name, providerID or MAC of its own.
    const web1 = await t.get(machineRef('libvirt', env.ns, 'web-1'));
    const spec = structuredClone(web1?.spec ?? {}) as Record<string, unknown> & { network?: Record<string, unknown>[] };
    delete spec.domainName;
    delete spec.providerID;
    for (const nic of spec.network ?? []) delete nic.macAddress;
    const name = `long-${'x'.repeat(248)}`;
    const machine = { ...machineRef('libvirt', env.ns, name), spec };
    await t.apply(machine);
    const ready = await t.condition(machine, 'Ready', 'True', undefined, 120_000);
    const uuid = String(ready.status?.domainUuid);
    const domain = await domainOf(env.anchor, uuid);
    expect(domain?.name).toHaveLength(LIBVIRT_MAX_DOMAIN_NAME_LENGTH);
    expect(domain?.name.startsWith(`${env.ns}-long-xxx`)).toBe(true);
    await t.delete(machine);
    await t.gone(machine, 120_000);
    expect(await domainOf(env.anchor, uuid)).toBeUndefined();
  }, 300_000);

  it('a LibvirtMachine with no network interface is Ready without an address (none will come)', async () => {
    const web1 = await t.get(machineRef('libvirt', env.ns, 'web-1'));
    const spec = structuredClone(web1?.spec ?? {});
    delete spec.domainName;
    delete spec.providerID;
    delete spec.network;
    const machine = { ...machineRef('libvirt', env.ns, 'no-nic'), spec };
    await t.apply(machine);
    const ready = await t.condition(machine, 'Ready', 'True', 'Reconciled', 120_000);
    expect(ready.status).toMatchObject({ observedPowerState: 'PoweredOn', addresses: [] });
    await t.delete(machine);
    await t.gone(machine, 120_000);
  }, 300_000);

  it('drives the domain to spec.desiredPowerState: off (shut down), suspended (managed save), on again', async () => {
    const uuid = await libvirtUuidOf(env.ns, 'web-1');
    const domain = await domainOf(env.anchor, uuid);
    if (!domain) throw new Error('web-1 has no domain');
    const state = (power: string) => t.exists(vm(env.ns, 'web-1', '', ''), (o) => o.status?.observedPowerState === power, 60_000);
    const spec = { userData: { secretRef: { name: 'web-user-data' } } };

    await t.apply(libvirtVm(env, 'web-1', { ...spec, desiredPowerState: 'PoweredOff' }));
    await state('PoweredOff');
    expect((await env.anchor.domains.state(domain)).state).toBe(DomainState.Shutoff);

    await t.apply(libvirtVm(env, 'web-1', { ...spec, desiredPowerState: 'Suspended' }));
    await state('Suspended');
    expect(await env.anchor.domains.hasManagedSaveImage(domain)).toBe(true);

    await t.apply(libvirtVm(env, 'web-1', { ...spec, desiredPowerState: 'PoweredOn' }));
    await state('PoweredOn');
    expect((await env.anchor.domains.state(domain)).state).toBe(DomainState.Running);
    // The same domain all along.
    expect(await domainsNamed(env.anchor, `${env.ns}-web-1`)).toEqual([`${env.ns}-web-1`]);
  }, 180_000);

  it('applies a CPU and memory change while the domain is off, and powers it on again', async () => {
    const uuid = await libvirtUuidOf(env.ns, 'web-1');
    const domain = await domainOf(env.anchor, uuid);
    if (!domain) throw new Error('web-1 has no domain');
    const spec = { userData: { secretRef: { name: 'web-user-data' } }, hardwareOverride: { cpus: 4, memoryMiB: 2048 } };
    // Running: the change waits (Ready says so) until the domain is off.
    await t.apply(libvirtVm(env, 'web-1', { ...spec, desiredPowerState: 'PoweredOff' }));
    // CPUs and memory are two libvirt calls: wait for both, then check both.
    const resized = async (): Promise<true | undefined> => {
      const info = await env.anchor.domains.info(domain);
      return info.vcpus === 4 && info.maxMemoryKiB === 2048 * 1024 ? true : undefined;
    };
    await waitFor('web-1 resized', resized, 60_000);
    expect(await env.anchor.domains.info(domain)).toMatchObject({ vcpus: 4, maxMemoryKiB: 2048 * 1024 });
    await t.apply(libvirtVm(env, 'web-1', { ...spec, desiredPowerState: 'PoweredOn' }));
    await t.exists(vm(env.ns, 'web-1', '', ''), (o) => o.status?.observedPowerState === 'PoweredOn', 60_000);
    await waitFor('a Reconfigured event', async () => ((await events(env.ns, 'web-1')).some((e) => e.reason === 'Reconfigured') ? true : undefined), 30_000);
  }, 180_000);

  it('deleting the VirtualMachine destroys and undefines the domain and deletes its volumes', async () => {
    const uuid = await libvirtUuidOf(env.ns, 'web-1');
    await t.delete(vm(env.ns, 'web-1', '', ''));
    await t.gone(machineRef('libvirt', env.ns, 'web-1'), 60_000);
    await t.gone(vm(env.ns, 'web-1', '', ''), 60_000);
    expect(await domainOf(env.anchor, uuid)).toBeUndefined();
    expect(await volumesOf(env.anchor, env.pool, uuid)).toEqual([]);
    expect((await eventsWith(t.api, env.ns, 'web-1', ['Deleted'])).find((e) => e.reason === 'Deleted')?.note).toBe(`Deleted the VM with UUID ${uuid}`);
  }, 120_000);

  it('provisions 20 VirtualMachines at once; deleting them leaves no domain and no volume', async () => {
    const names = Array.from({ length: 20 }, (_, i) => `fleet-${String(i).padStart(2, '0')}`);
    await Promise.all(names.map((name) => t.apply(libvirtVm(env, name))));
    await Promise.all(names.map((name) => ready(name)));
    const uuids = await Promise.all(names.map((name) => libvirtUuidOf(env.ns, name)));
    expect(await domainsNamed(env.anchor, `${env.ns}-fleet-`)).toEqual(names.map((n) => `${env.ns}-${n}`));

    await Promise.all(names.map((name) => t.delete(vm(env.ns, name, '', ''))));
    await Promise.all(names.map((name) => t.gone(vm(env.ns, name, '', ''), 180_000)));
    expect(await domainsNamed(env.anchor, `${env.ns}-fleet-`)).toEqual([]);
    for (const uuid of uuids) expect(await volumesOf(env.anchor, env.pool, uuid)).toEqual([]);
    // Every pass shared one connection: nothing failed to reach the daemon.
    expect(await env.provider.metric('banlieue_backend_calls_total', { backend: 'libvirt', outcome: 'error' })).toBe(0);
  }, 400_000);
});

describe('libvirt provider crash safety', () => {
  let env: LibvirtEnv;

  beforeAll(async () => {
    env = await startLibvirtEnv('libvirt-crash');
  }, 240_000);
  afterAll(() => stopLibvirtEnv(env), 240_000);

  it('a provider killed right after defining the domain leaves exactly one domain, adopted by UUID after the restart', async () => {
    await t.apply(libvirtVm(env, 'crash-1'));
    await waitFor('the domain to be defined', () => (env.provider.logs().includes('Defined the domain') ? true : undefined), 120_000);
    await env.provider.kill();
    const uuid = await libvirtUuidOf(env.ns, 'crash-1');
    expect(await domainOf(env.anchor, uuid)).toBeDefined();
    env.provider = await startLibvirtProvider(env);

    await t.condition(vm(env.ns, 'crash-1', '', ''), 'Ready', 'True', 'Reconciled', 120_000);
    expect(await domainsNamed(env.anchor, `${env.ns}-crash-1`)).toEqual([`${env.ns}-crash-1`]);
    expect((await domainOf(env.anchor, uuid))?.name).toBe(`${env.ns}-crash-1`);
    // Killed before its status write, the pass after the restart adopts it (by UUID and mark); killed after it, nothing was
    // left to do. Events are sent in the background, so the killed process's Created may be lost: never two of them.
    const reasons = (await events(env.ns, 'crash-1')).map((e) => e.reason);
    expect(reasons.filter((r) => r === 'Created').length).toBeLessThanOrEqual(1);
  }, 300_000);
});
