// Real guests through the whole stack: a VirtualMachine, `banlieue controller`
// and `banlieue provider libvirt` as processes, and a private libvirtd with the
// QEMU driver booting the test guest under TCG (`<domain type='qemu'>`, the
// Provider's spec.libvirt.domainType) on a libvirt network (forward mode
// `open`, DHCP by libvirt's own dnsmasq), all inside namespaces this test
// creates (qemu-host.ts). The guest boots from its OS disk (an overlay on the
// image volume), reads the NoCloud seed the provider built and uploaded, takes
// a DHCP lease and reports on its serial console, which the provider logs to a
// file: the marker there proves the user-data reached the guest. libvirt's
// lease source then gives the provider that address: the machine is Ready.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DomainState } from '../../controller/backends/libvirt/client/constants.js';
import type { Network, StoragePool } from '../../controller/backends/libvirt/client/handles.js';
import { type LibvirtClient } from '../../controller/backends/libvirt/client/libvirt-client.js';
import { derivedMac } from '../../controller/backends/libvirt/machine/mac-address.js';
import { controllerArgs, startRole, type RoleProcess } from '../support/controller-process.js';
import { startTcgHost, tcgProviderObjects } from '../support/libvirt/tcg-host.js';
import { CORE, TestApi, machineRef, vm, type Obj } from '../support/fixtures.js';
import { createNamespace } from '../support/kube.js';
import { domainOf, libvirtProviderArgs, libvirtUuidOf, volumesOf } from '../support/libvirt/env.js';
import { waitFor } from '../support/wait.js';
import { ensureGuestDisk } from '../peers/libvirt/guest-disk.js';
import { GUEST_MARKER_LINE, readGuestReport } from '../peers/libvirt/guest/guest-init.js';
import { GUEST_LIBVIRT_NETWORK, type QemuHost } from '../peers/libvirt/qemu-host.js';

/** TCG boots the guest in seconds when idle; these machines are shared, so be generous. */
const BOOT_TIMEOUT_MS = 300_000;
const POOL = 'guests';
const IMAGE = 'banlieue-test-guest.img';

const t = new TestApi();

describe('real guests on libvirt (QEMU, TCG)', () => {
  let host: QemuHost;
  let client: LibvirtClient;
  let pool: StoragePool;
  let network: Network;
  let ns: string;
  let removeNs: () => Promise<void>;
  let controller: RoleProcess;
  let provider: RoleProcess;
  const suffix = Math.random().toString(36).slice(2, 7);
  const vmClass: Obj = {
    apiVersion: CORE,
    kind: 'VMClass',
    metadata: { name: `tcg-tiny-${suffix}` },
    spec: {
      hardware: { cpus: 1, memoryMiB: 256, disks: [{ name: 'os', sizeGiB: 1, storageClass: 'local' }] },
      network: { interfaces: [{ name: 'eth0', networkClass: 'lan' }] },
    },
  };
  const vmImage: Obj = {
    apiVersion: CORE,
    kind: 'VMImage',
    metadata: { name: `test-guest-${suffix}` },
    spec: {
      osFamily: 'linux',
      osDistribution: 'busybox',
      osVersion: '1',
      architecture: 'amd64',
      sources: [{ providerClass: 'libvirt', kind: 'BackingFile', ref: IMAGE }],
    },
  };

  beforeAll(async () => {
    const guest = await ensureGuestDisk();
    ({ host, client, pool, network } = await startTcgHost(POOL, { file: guest.disk, name: IMAGE }));

    ({ name: ns, remove: removeNs } = await createNamespace('libvirt-tcg'));
    for (const obj of [...tcgProviderObjects(ns, host, POOL), vmClass, vmImage]) await t.apply(obj);
    controller = await startRole(controllerArgs(inject('kubeconfig'), ns));
    provider = await startRole(libvirtProviderArgs(ns));
  }, 900_000);

  afterAll(async () => {
    await controller?.stop();
    await provider?.stop();
    for (const obj of [vmClass, vmImage]) await t.delete(obj).catch(() => undefined);
    await client?.close();
    await host?.stop();
    await removeNs?.();
  }, 180_000);

  const consoleOf = (domainName: string): string => {
    try {
      return readFileSync(join(host.qemuLogDir, `${domainName}-console.log`), 'utf8');
    } catch {
      return '';
    }
  };
  const failure = (error: unknown, domainName: string): Error =>
    new Error(`${String(error)}\nconsole: ${consoleOf(domainName).slice(-2000)}\nlibvirtd: ${host.logTail()}\nprovider: ${provider.logs().slice(-3000)}`);

  /** The VirtualMachine once Ready=True/Reconciled in `power` (Ready alone is already true before a power change). */
  const readyIn = (power: 'PoweredOn' | 'PoweredOff', domainName: string): Promise<Obj> =>
    t
      .exists(
        vm(ns, 'guest-1', '', ''),
        (o) => {
          const ready = (o.status?.conditions as { type: string; status: string; reason: string }[] | undefined)?.find((c) => c.type === 'Ready');
          return o.status?.observedPowerState === power && ready?.status === 'True' && ready.reason === 'Reconciled';
        },
        BOOT_TIMEOUT_MS,
      )
      .catch((e: unknown) => {
        throw failure(e, domainName);
      });
  const leaseOf = async (mac: string): Promise<string | undefined> =>
    (await client.networks.dhcpLeases(network, mac)).find((l) => l.type === 'ipv4')?.ipAddress;
  // dnsmasq's lease helper records the lease after the guest has it: on a busy machine, a moment later.
  const leasedTo = (mac: string, address: string | undefined): Promise<string | undefined> =>
    waitFor(`libvirt to record the lease of ${mac}`, async () => ((await leaseOf(mac)) === address ? address : undefined), 60_000).catch(() => leaseOf(mac));

  it('boots a VirtualMachine’s domain: the guest reads its user-data from the seed and takes a lease; Ready with that address; off (ACPI), on, deleted', async () => {
    const marker = randomUUID();
    await t.apply({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'guest-user-data', namespace: ns },
      stringData: { 'user-data': `#cloud-config\n${GUEST_MARKER_LINE} ${marker}\n` },
    });
    const spec = { userData: { secretRef: { name: 'guest-user-data' } } };
    await t.apply(vm(ns, 'guest-1', vmClass.metadata.name, vmImage.metadata.name, spec));
    const domainName = `${ns}-guest-1`;
    const uuid = await libvirtUuidOf(ns, 'guest-1', BOOT_TIMEOUT_MS);

    const report = await waitFor(
      'the guest to report its marker and address',
      () => {
        const seen = readGuestReport(consoleOf(domainName));
        return seen.has('marker') && seen.has('address') ? seen : undefined;
      },
      BOOT_TIMEOUT_MS,
    ).catch((e: unknown) => {
      throw failure(e, domainName);
    });
    expect(report.get('marker')).toBe(marker);
    expect(report.get('instance-id')).toBe(uuid);
    expect(report.get('seed-files')?.split(' ').filter(Boolean).sort()).toEqual(['meta-data', 'network-config', 'user-data']);
    // The MAC the seed's network-config names is the one the domain has, and libvirt's dnsmasq leased to.
    const mac = derivedMac(uuid, 'eth0');
    expect(report.get('mac')).toBe(mac);
    const address = report.get('address');
    expect(address).toMatch(new RegExp(`^${GUEST_LIBVIRT_NETWORK.gateway.split('.').slice(0, 3).join('\\.')}\\.\\d+$`));
    expect(await leasedTo(mac, address)).toBe(address);

    // Ready with the address the guest took, through libvirt's lease source.
    const ready = await t.condition(vm(ns, 'guest-1', '', ''), 'Ready', 'True', 'Reconciled', BOOT_TIMEOUT_MS).catch((e: unknown) => {
      throw failure(e, domainName);
    });
    expect(ready.status?.addresses).toEqual([{ type: 'InternalIP', address }]);
    expect(ready.status?.observedPowerState).toBe('PoweredOn');
    expect((await t.get(machineRef('libvirt', ns, 'guest-1')))?.status).toMatchObject({
      initialization: { provisioned: true },
      domainUuid: uuid,
      addressSource: 'dhcpLease',
    });
    const domain = await domainOf(client, uuid);
    if (!domain) throw new Error('guest-1 has no domain');
    const xml = await client.domains.xmlDesc(domain);
    expect(xml.startsWith("<domain type='qemu'")).toBe(true);
    expect(xml).toContain(`<source network='${GUEST_LIBVIRT_NETWORK.name}'`);
    expect((await client.domains.state(domain)).state).toBe(DomainState.Running);

    // Off: the guest sees the ACPI power button and powers itself off (no destroy needed).
    await t.apply(vm(ns, 'guest-1', vmClass.metadata.name, vmImage.metadata.name, { ...spec, desiredPowerState: 'PoweredOff' }));
    await readyIn('PoweredOff', domainName);
    expect((await client.domains.state(domain)).state).toBe(DomainState.Shutoff);
    expect(readGuestReport(consoleOf(domainName)).get('state')).toBe('power-button');

    // On again: the same domain boots from the same disk and takes the same lease.
    await t.apply(vm(ns, 'guest-1', vmClass.metadata.name, vmImage.metadata.name, { ...spec, desiredPowerState: 'PoweredOn' }));
    await waitFor('the guest to boot again', () => (readGuestReport(consoleOf(domainName)).get('state') === 'ready' ? true : undefined), BOOT_TIMEOUT_MS).catch(
      (e: unknown) => {
        throw failure(e, domainName);
      },
    );
    expect((await client.domains.state(domain)).state).toBe(DomainState.Running);
    expect(readGuestReport(consoleOf(domainName)).get('address')).toBe(address);
    expect(await leasedTo(mac, address)).toBe(address);
    expect((await readyIn('PoweredOn', domainName)).status?.addresses).toEqual([{ type: 'InternalIP', address }]);

    await t.delete(vm(ns, 'guest-1', '', ''));
    await t.gone(vm(ns, 'guest-1', '', ''), 120_000);
    expect(await domainOf(client, uuid)).toBeUndefined();
    expect(await volumesOf(client, pool, uuid)).toEqual([]);
    // The image stays.
    expect((await client.pools.listVolumes(pool)).map((v) => v.name)).toEqual([IMAGE]);
  }, 1_200_000);
});
