// Real guests through the whole stack: a VirtualMachine, `banlieue controller`
// and `banlieue provider libvirt` as processes, and a private libvirtd with the
// QEMU driver booting the test guest under TCG (`<domain type='qemu'>`, the
// Provider's spec.libvirt.domainType) on a bridge served by its own dnsmasq,
// all inside namespaces this test creates (qemu-host.ts). The guest boots from
// its OS disk (an overlay on the image volume), reads the NoCloud seed the
// provider built and uploaded, takes a DHCP lease and reports on its serial
// console, which the provider logs to a file: the marker there proves the
// user-data reached the guest.
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DomainState } from '../../controller/backends/libvirt/client/constants.js';
import type { StoragePool } from '../../controller/backends/libvirt/client/handles.js';
import { LibvirtClient } from '../../controller/backends/libvirt/client/libvirt-client.js';
import { derivedMac } from '../../controller/backends/libvirt/machine/mac-address.js';
import { startRole, type RoleProcess } from '../support/controller-process.js';
import { CORE, TestApi, machineRef, vm, type Obj } from '../support/fixtures.js';
import { createNamespace } from '../support/kube.js';
import { domainOf, libvirtProviderArgs, libvirtUuidOf, volumesOf } from '../support/libvirt-env.js';
import { waitFor } from '../support/wait.js';
import { ensureGuestDisk } from '../peers/libvirt/guest-disk.js';
import { GUEST_MARKER_LINE, readGuestReport } from '../peers/libvirt/guest/guest-init.js';
import { GUEST_NETWORK, readLeases, startQemuHost, type QemuHost } from '../peers/libvirt/qemu-host.js';

/** TCG boots the guest in seconds when idle; these machines are shared, so be generous. */
const BOOT_TIMEOUT_MS = 300_000;
const POOL = 'guests';
const IMAGE = 'banlieue-test-guest.img';

const t = new TestApi();

describe('real guests on libvirt (QEMU, TCG)', () => {
  let host: QemuHost;
  let client: LibvirtClient;
  let pool: StoragePool;
  let ns: string;
  let removeNs: () => Promise<void>;
  let controller: RoleProcess;
  let provider: RoleProcess;
  const suffix = Math.random().toString(36).slice(2, 7);
  const vmClass: Obj = {
    apiVersion: CORE,
    kind: 'VMClass',
    metadata: { name: `tcg-tiny-${suffix}` },
    spec: { hardware: { cpus: 1, memoryMiB: 256, disks: [{ name: 'os', sizeGiB: 1, storageClass: 'local' }] }, network: { interfaces: [{ name: 'eth0', networkClass: 'lan' }] } },
  };
  const vmImage: Obj = {
    apiVersion: CORE,
    kind: 'VMImage',
    metadata: { name: `test-guest-${suffix}` },
    spec: { osFamily: 'linux', osDistribution: 'busybox', osVersion: '1', architecture: 'amd64', sources: [{ providerClass: 'libvirt', kind: 'BackingFile', ref: IMAGE }] },
  };

  beforeAll(async () => {
    const guest = await ensureGuestDisk();
    host = await startQemuHost();
    client = await LibvirtClient.connect({ uri: host.uri });
    // A directory pool holding the image, as a host's image pipeline would leave it.
    mkdirSync(join(host.dir, 'pool'));
    pool = await client.pools.createTransient(`<pool type='dir'><name>${POOL}</name><target><path>${join(host.dir, 'pool')}</path></target></pool>`);
    const size = statSync(guest.disk).size;
    const volume = await client.volumes.create(pool, `<volume><name>${IMAGE}</name><capacity unit='bytes'>${size}</capacity><target><format type='raw'/></target></volume>`);
    await client.volumes.upload(volume, readFileSync(guest.disk));

    ({ name: ns, remove: removeNs } = await createNamespace('libvirt-tcg'));
    for (const obj of [
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'host-creds', namespace: ns }, stringData: {} },
      {
        apiVersion: CORE,
        kind: 'Provider',
        metadata: { name: 'tcg-host', namespace: ns },
        spec: {
          providerClassRef: { name: 'libvirt' },
          connection: { endpoint: host.uri, credentialsRef: { name: 'host-creds' } },
          libvirt: { domainType: 'qemu' },
          capabilities: { storageClasses: [{ name: 'local', target: { pool: POOL } }], networkClasses: [{ name: 'lan', target: { bridge: GUEST_NETWORK.bridge } }] },
        },
      },
      vmClass,
      vmImage,
    ] as Obj[]) {
      await t.apply(obj);
    }
    controller = await startRole(['controller', '--kubeconfig', inject('kubeconfig'), '--no-leader-elect', '--namespace', ns]);
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

  // What this host cannot give yet: Ready's address. The guest's NIC is on a plain bridge with
  // the harness's own dnsmasq, so of libvirt's address sources only ARP could see it, and
  // libvirt 9.0's ARP reader fails on every netlink dump ("wrong nlmsg len", fixed upstream after
  // 9.0); there is no libvirt network (leases) and no guest agent. So the machine waits for an
  // address (WaitingForAddress) while the guest has one; the lease source is covered on the test
  // driver. A libvirt network with its own DHCP in qemu-host.ts would let this test wait for Ready.
  it('boots a VirtualMachine’s domain: the guest reads its user-data from the seed and takes a lease; off (ACPI), on, deleted', async () => {
    const marker = randomUUID();
    await t.apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'guest-user-data', namespace: ns }, stringData: { 'user-data': `#cloud-config\n${GUEST_MARKER_LINE} ${marker}\n` } });
    const spec = { userData: { secretRef: { name: 'guest-user-data' } } };
    await t.apply(vm(ns, 'guest-1', vmClass.metadata.name, vmImage.metadata.name, spec));
    const domainName = `${ns}-guest-1`;
    const uuid = await libvirtUuidOf(ns, 'guest-1', BOOT_TIMEOUT_MS);

    const report = await waitFor('the guest to report its marker and address', () => {
      const seen = readGuestReport(consoleOf(domainName));
      return seen.has('marker') && seen.has('address') ? seen : undefined;
    }, BOOT_TIMEOUT_MS).catch((e: unknown) => {
      throw failure(e, domainName);
    });
    expect(report.get('marker')).toBe(marker);
    expect(report.get('instance-id')).toBe(uuid);
    expect(report.get('seed-files')?.split(' ').filter(Boolean).sort()).toEqual(['meta-data', 'network-config', 'user-data']);
    // The MAC the seed's network-config names is the one the domain has, and dnsmasq leased to.
    const mac = derivedMac(uuid, 'eth0');
    expect(report.get('mac')).toBe(mac);
    expect(readLeases(host.leasesFile).get(mac)).toBe(report.get('address'));

    const waiting = await t.condition(vm(ns, 'guest-1', '', ''), 'InfrastructureReady', 'False', 'WaitingForAddress', BOOT_TIMEOUT_MS);
    expect(waiting.status?.observedPowerState).toBe('PoweredOn');
    expect((await t.get(machineRef('libvirt', ns, 'guest-1')))?.status).toMatchObject({ initialization: { provisioned: true }, domainUuid: uuid });
    const domain = await domainOf(client, uuid);
    if (!domain) throw new Error('guest-1 has no domain');
    expect((await client.domains.xmlDesc(domain)).startsWith("<domain type='qemu'")).toBe(true);
    expect((await client.domains.state(domain)).state).toBe(DomainState.Running);

    // Off: the guest sees the ACPI power button and powers itself off (no destroy needed).
    await t.apply(vm(ns, 'guest-1', vmClass.metadata.name, vmImage.metadata.name, { ...spec, desiredPowerState: 'PoweredOff' }));
    await t.condition(vm(ns, 'guest-1', '', ''), 'Ready', 'True', 'Reconciled', BOOT_TIMEOUT_MS);
    expect((await client.domains.state(domain)).state).toBe(DomainState.Shutoff);
    expect(readGuestReport(consoleOf(domainName)).get('state')).toBe('power-button');

    // On again: the same domain boots from the same disk and takes the same lease.
    await t.apply(vm(ns, 'guest-1', vmClass.metadata.name, vmImage.metadata.name, { ...spec, desiredPowerState: 'PoweredOn' }));
    await waitFor('the guest to boot again', () => (readGuestReport(consoleOf(domainName)).get('state') === 'ready' ? true : undefined), BOOT_TIMEOUT_MS).catch((e: unknown) => {
      throw failure(e, domainName);
    });
    expect((await client.domains.state(domain)).state).toBe(DomainState.Running);
    expect(readLeases(host.leasesFile).get(mac)).toBe(report.get('address'));

    await t.delete(vm(ns, 'guest-1', '', ''));
    await t.gone(vm(ns, 'guest-1', '', ''), 120_000);
    expect(await domainOf(client, uuid)).toBeUndefined();
    expect(await volumesOf(client, pool, uuid)).toEqual([]);
    // The image stays.
    expect((await client.pools.listVolumes(pool)).map((v) => v.name)).toEqual([IMAGE]);
  }, 1_200_000);
});
