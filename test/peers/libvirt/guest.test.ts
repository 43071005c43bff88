// The real test guest (guest/) on the private networks of qemu-host.ts: booted
// by QEMU directly, then by our private libvirtd through our libvirt client.
// Each proves the NoCloud seed written by controller/backends/cloud-init
// reaches a Linux guest (its marker on the serial console) and that the guest
// takes a DHCP lease on the private bridge.
import { type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { toNoCloudIso } from '../../../controller/backends/cloud-init/nocloud-iso.js';
import { DomainState, ShutdownFlags } from '../../../controller/backends/libvirt/client/constants.js';
import { LibvirtClient } from '../../../controller/backends/libvirt/client/libvirt-client.js';
import { waitFor } from '../../support/wait.js';
import { ensureGuestImage, type GuestImage } from './guest/guest-image.js';
import { GUEST_MARKER_LINE, readGuestReport } from './guest/guest-init.js';
import { GUEST_NETWORK, readLeases, startGuestNetwork, startQemuHost, type GuestNetworkHost } from './qemu-host.js';

/** TCG boots the guest in seconds when idle; these machines are shared, so be generous. */
const BOOT_TIMEOUT_MS = 240_000;

let image: GuestImage;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  image = await ensureGuestImage();
}, 600_000);

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A seed whose user-data carries `marker`, written into the host's directory. */
function writeSeed(host: GuestNetworkHost, marker: string, hostname: string): string {
  const path = join(host.dir, 'seed.iso');
  writeFileSync(
    path,
    toNoCloudIso({
      userData: `#cloud-config\n${GUEST_MARKER_LINE} ${marker}\n`,
      metaData: `instance-id: ${hostname}\nlocal-hostname: ${hostname}\n`,
    }),
  );
  return path;
}

/** Waits until the console shows the marker and an address; the report so far. */
async function waitForReport(consoleFile: string, guest?: ChildProcess): Promise<Map<string, string>> {
  return waitFor(
    'the guest to report its marker and address on the serial console',
    () => {
      if (guest && guest.exitCode !== null) throw new Error(`QEMU exited (${guest.exitCode})`);
      let text: string;
      try {
        text = readFileSync(consoleFile, 'utf8');
      } catch {
        return undefined;
      }
      const report = readGuestReport(text);
      return report.has('marker') && report.has('address') ? report : undefined;
    },
    BOOT_TIMEOUT_MS,
  );
}

function inGuestRange(address: string | undefined): boolean {
  const last = (ip: string): number => Number(ip.split('.')[3]);
  const prefix = GUEST_NETWORK.gateway.split('.').slice(0, 3).join('.');
  return (
    address !== undefined && address.startsWith(`${prefix}.`) && last(address) >= last(GUEST_NETWORK.dhcpFirst) && last(address) <= last(GUEST_NETWORK.dhcpLast)
  );
}

async function runInside(host: GuestNetworkHost, command: string, args: readonly string[]): Promise<void> {
  const child = host.spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`${command} ${args.join(' ')} exited ${code}: ${stderr}`);
}

describe('test guest booted by QEMU on a private bridge', () => {
  it('reports the marker from its user-data and the address dnsmasq leased to its MAC', async () => {
    const host = await startGuestNetwork();
    cleanups.push(() => host.stop());
    const marker = randomUUID();
    const mac = '52:54:00:0b:a7:01';
    const seed = writeSeed(host, marker, 'direct-guest');
    const consoleFile = join(host.dir, 'console.log');
    await runInside(host, 'ip', ['tuntap', 'add', 'dev', 'tap0', 'mode', 'tap']);
    await runInside(host, 'ip', ['link', 'set', 'tap0', 'master', GUEST_NETWORK.bridge, 'up']);

    const qemu = host.spawn(
      'qemu-system-x86_64',
      [
        '-accel',
        'tcg',
        '-m',
        '256',
        '-nodefaults',
        '-no-user-config',
        '-display',
        'none',
        '-no-reboot',
        '-kernel',
        image.kernel,
        '-initrd',
        image.initramfs,
        '-append',
        image.cmdline,
        '-drive',
        `file=${seed},if=virtio,format=raw,readonly=on`,
        '-netdev',
        'tap,id=n0,ifname=tap0,script=no,downscript=no',
        '-device',
        `virtio-net-pci,netdev=n0,mac=${mac}`,
        '-serial',
        `file:${consoleFile}`,
      ],
      { stdio: 'ignore' },
    );
    const report = await waitForReport(consoleFile, qemu);

    expect(report.get('marker')).toBe(marker);
    expect(report.get('seed-files')?.split(' ').sort()).toEqual(['meta-data', 'user-data']);
    expect(inGuestRange(report.get('address'))).toBe(true);
    expect(readLeases(host.leasesFile).get(mac)).toBe(report.get('address'));
  }, 600_000);
});

describe('test guest as a <domain type="qemu"> of the private libvirtd', () => {
  it('boots from the seed on a CD-ROM, gets a lease and powers off on an ACPI shutdown', async () => {
    const host = await startQemuHost();
    cleanups.push(() => host.stop());
    const client = await LibvirtClient.connect({ uri: host.uri });
    cleanups.push(() => client.close());
    const marker = randomUUID();
    const uuid = randomUUID();
    const mac = '52:54:00:0b:a7:02';
    const seed = writeSeed(host, marker, 'libvirt-guest');
    const consoleFile = join(host.dir, 'console.log');

    const domain = await client.domains.define(`<domain type='qemu'>
  <name>banlieue-guest</name>
  <uuid>${uuid}</uuid>
  <memory unit='MiB'>256</memory>
  <vcpu>1</vcpu>
  <os>
    <type arch='x86_64' machine='pc'>hvm</type>
    <kernel>${image.kernel}</kernel>
    <initrd>${image.initramfs}</initrd>
    <cmdline>${image.cmdline}</cmdline>
  </os>
  <features><acpi/></features>
  <on_poweroff>destroy</on_poweroff>
  <on_reboot>destroy</on_reboot>
  <on_crash>destroy</on_crash>
  <devices>
    <disk type='file' device='cdrom'>
      <driver name='qemu' type='raw'/>
      <source file='${seed}'/>
      <target dev='hdc' bus='ide'/>
      <readonly/>
    </disk>
    <interface type='bridge'>
      <source bridge='${GUEST_NETWORK.bridge}'/>
      <mac address='${mac}'/>
      <model type='virtio'/>
    </interface>
    <serial type='file'>
      <source path='${consoleFile}'/>
      <target port='0'/>
    </serial>
    <memballoon model='none'/>
  </devices>
</domain>`);
    await client.domains.start(domain);
    const report = await waitForReport(consoleFile).catch((error: unknown) => {
      const qemuLog = join(host.qemuLogDir, 'banlieue-guest.log');
      throw new Error(`${String(error)}\nlibvirtd: ${host.logTail()}\nQEMU: ${existsSync(qemuLog) ? readFileSync(qemuLog, 'utf8').slice(-4000) : '(no log)'}`);
    });

    expect(report.get('marker')).toBe(marker);
    expect(report.get('seed')).toBe('/dev/sr0');
    expect(inGuestRange(report.get('address'))).toBe(true);
    expect(readLeases(host.leasesFile).get(mac)).toBe(report.get('address'));

    await client.domains.shutdown(domain, ShutdownFlags.AcpiPowerButton);
    await waitFor('the domain to power off', async () => (await client.domains.state(domain)).state === DomainState.Shutoff, BOOT_TIMEOUT_MS);
    expect(readGuestReport(readFileSync(consoleFile, 'utf8')).get('state')).toBe('power-button');
    await client.domains.undefine(domain);
  }, 600_000);
});
