// A private libvirt host for real guests: a root libvirtd with the QEMU, storage
// and network drivers (plus virtlogd), a bridge and a DHCP server, all inside
// namespaces of this test run:
//
// - network namespace: guests sit on bridge `br0` (10.200.0.1/24), served by
//   our own dnsmasq, whose leases file the test reads; nothing reaches the
//   host's interfaces. libvirtd also runs its network driver, so a test can
//   create the libvirt network of GUEST_LIBVIRT_NETWORK (guestLibvirtNetworkXml):
//   forward mode `open` (no iptables/nft rules), its own bridge and its own
//   dnsmasq, whose leases libvirt reports (virNetworkGetDHCPLeases, the lease
//   source of virDomainInterfaceAddresses). libvirt keeps that dnsmasq's files
//   in /var/lib/libvirt/dnsmasq and /run/libvirt/network, both private binds.
// - mount namespace: /run/libvirt, /var/lib/libvirt, /var/log/libvirt,
//   /var/cache/libvirt and /etc/libvirt are binds of this run's directory, so
//   runs never collide with each other or with a host daemon; /etc/passwd and
//   /etc/group gain Debian's `libvirt-qemu` account (libvirt-daemon-system,
//   which makes it, is not installed).
// - pid namespace: its PID 1 is a bash that started everything and then waits
//   on its stdin. Closing that pipe (stop(), or this process dying) ends bash,
//   and the kernel then kills every process of the namespace, QEMU guests
//   included: nothing is left behind. bash also reaps the QEMU processes
//   libvirtd daemonizes, so libvirt sees them exit.
//
// The daemon's unix socket is in this run's directory, a path that exists
// both inside and outside, so the test connects to it from the host.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Every wait on a spawned process: these machines are busy and shared. */
const PROCESS_TIMEOUT_MS = 120_000;
/** Where Debian installs libvirt's loadable connection drivers. */
const DRIVER_DIR = '/usr/lib/x86_64-linux-gnu/libvirt/connection-driver';
/**
 * libvirtd loads every driver in its directory, so only these. The network driver runs the
 * libvirt network of GUEST_LIBVIRT_NETWORK (its dnsmasq, its leases); a network of forward mode
 * `open` needs no firewall rules.
 */
const DRIVERS = ['qemu', 'storage', 'network'] as const;
/** The fixed directories of a root libvirtd, each bound to `<dir>/<name>`. */
const PRIVATE_DIRS = { etc: '/etc/libvirt', run: '/run/libvirt', lib: '/var/lib/libvirt', log: '/var/log/libvirt', cache: '/var/cache/libvirt' } as const;
/** Debian's QEMU user and group (configure --with-qemu-user/--with-qemu-group) and an id free on these machines. */
const QEMU_ACCOUNT = 'libvirt-qemu';
const QEMU_ID = 64055;

/** The guests' network inside the namespace. */
export const GUEST_NETWORK = {
  bridge: 'br0',
  gateway: '10.200.0.1',
  prefixLength: 24,
  dhcpFirst: '10.200.0.100',
  dhcpLast: '10.200.0.199',
} as const;

/** A libvirt network inside the namespaces (create it with guestLibvirtNetworkXml on a QemuHost). */
export const GUEST_LIBVIRT_NETWORK = {
  name: 'guests',
  bridge: 'virbr-guests',
  gateway: '10.201.0.1',
  prefixLength: 24,
  dhcpFirst: '10.201.0.100',
  dhcpLast: '10.201.0.199',
} as const;

/** GUEST_LIBVIRT_NETWORK as network XML: forward mode `open` (no firewall rules), DHCP by libvirt's dnsmasq. */
export function guestLibvirtNetworkXml(): string {
  const n = GUEST_LIBVIRT_NETWORK;
  return [
    '<network>',
    `  <name>${n.name}</name>`,
    "  <forward mode='open'/>",
    `  <bridge name='${n.bridge}' stp='off'/>`,
    `  <ip address='${n.gateway}' prefix='${n.prefixLength}'>`,
    `    <dhcp><range start='${n.dhcpFirst}' end='${n.dhcpLast}'/></dhcp>`,
    '  </ip>',
    '</network>',
  ].join('\n');
}

/** Namespaces with the guest network up and dnsmasq serving it. */
export interface GuestNetworkHost {
  /** This run's directory (visible at the same path inside): put seeds and console logs here. */
  readonly dir: string;
  /** dnsmasq's leases file (`<expiry> <mac> <ip> <hostname> <client-id>` lines). */
  readonly leasesFile: string;
  /** Starts `command` inside the namespaces (nsenter forks it into the pid namespace). */
  spawn(command: string, args: readonly string[], options?: SpawnOptions): ChildProcess;
  /** Ends every process inside, then removes the run's directory. */
  stop(): Promise<void>;
}

export interface QemuHost extends GuestNetworkHost {
  /** libvirtd's read-write unix socket. */
  readonly socketPath: string;
  /** A URI for our client: `qemu+unix:///system?socket=…`. */
  readonly uri: string;
  /** libvirt's per-domain QEMU logs (/var/log/libvirt/qemu inside). */
  readonly qemuLogDir: string;
  /** The tail of libvirtd's log (for failure messages). */
  logTail(): string;
}

/** Only the guest network: for booting QEMU directly. */
export async function startGuestNetwork(): Promise<GuestNetworkHost> {
  const dir = mkdtempSync(join(tmpdir(), 'banlieue-guest-net-'));
  return startNamespaces(dir, networkScript(dir));
}

/** The guest network and a libvirtd with the QEMU, storage and network drivers, serving on its socket. */
export async function startQemuHost(): Promise<QemuHost> {
  const dir = mkdtempSync(join(tmpdir(), 'banlieue-qemu-host-'));
  const socketDir = join(dir, 'socket');
  const socketPath = join(socketDir, 'libvirt-sock');
  const host = await startNamespaces(dir, [...mountScript(dir), ...networkScript(dir), ...libvirtScript(dir, socketDir)]);
  const log = join(dir, 'libvirtd.log');
  const logTail = (): string => tail(log) + tail(join(dir, 'libvirtd.stderr'));
  try {
    await waitUntilServing(socketPath, logTail);
  } catch (error) {
    await host.stop();
    throw error;
  }
  return {
    ...host,
    socketPath,
    uri: `qemu+unix:///system?socket=${socketPath}`,
    qemuLogDir: join(dir, 'log', 'qemu'),
    logTail,
  };
}

/** The dnsmasq leases of `file`: MAC → IPv4 address. */
export function readLeases(file: string): Map<string, string> {
  const leases = new Map<string, string>();
  if (!existsSync(file)) return leases;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const [, mac, address] = line.split(' ');
    if (mac !== undefined && address !== undefined) leases.set(mac.toLowerCase(), address);
  }
  return leases;
}

/** Binds of the daemon's fixed directories and of passwd/group with the QEMU account. */
function mountScript(dir: string): string[] {
  const lines: string[] = [];
  for (const [name, target] of Object.entries(PRIVATE_DIRS)) {
    mkdirSync(join(dir, name));
    // The mount point must exist on the shared file system; it stays empty there.
    lines.push(`mkdir -p ${target}`, `mount --bind ${quote(join(dir, name))} ${target}`);
  }
  mkdirSync(join(dir, 'log', 'qemu'));
  for (const [file, entry] of [
    ['/etc/passwd', `${QEMU_ACCOUNT}:x:${QEMU_ID}:${QEMU_ID}:libvirt QEMU:/var/lib/libvirt:/usr/sbin/nologin`],
    ['/etc/group', `${QEMU_ACCOUNT}:x:${QEMU_ID}:`],
  ] as const) {
    const copy = join(dir, file.replaceAll('/', '_'));
    const lines0 = readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => line !== '');
    if (!lines0.some((line) => line.startsWith(`${QEMU_ACCOUNT}:`))) lines0.push(entry);
    writeFileSync(copy, `${lines0.join('\n')}\n`);
    lines.push(`mount --bind ${quote(copy)} ${file}`);
  }
  return lines;
}

/** Loopback, the bridge and dnsmasq (DHCP only: port=0 turns DNS off). */
function networkScript(dir: string): string[] {
  const n = GUEST_NETWORK;
  const dnsmasq = [
    'dnsmasq',
    '--keep-in-foreground',
    '--conf-file=/dev/null',
    '--port=0',
    '--user=root',
    '--group=root',
    '--bind-interfaces',
    `--interface=${n.bridge}`,
    '--except-interface=lo',
    `--dhcp-range=${n.dhcpFirst},${n.dhcpLast},255.255.255.0,12h`,
    '--dhcp-authoritative',
    `--dhcp-leasefile=${join(dir, 'dnsmasq.leases')}`,
    `--pid-file=${join(dir, 'dnsmasq.pid')}`,
    '--log-dhcp',
    `--log-facility=${join(dir, 'dnsmasq.log')}`,
  ];
  return [
    'ip link set lo up',
    `ip link add ${n.bridge} type bridge`,
    `ip addr add ${n.gateway}/${n.prefixLength} dev ${n.bridge}`,
    `ip link set ${n.bridge} up`,
    `${dnsmasq.map(quote).join(' ')} &`,
  ];
}

/** qemu.conf for root without cgroups or a security driver; virtlogd, then libvirtd. */
function libvirtScript(dir: string, socketDir: string): string[] {
  mkdirSync(socketDir);
  writeFileSync(
    join(dir, 'etc', 'qemu.conf'),
    [
      'user = "root"',
      'group = "root"',
      'dynamic_ownership = 0',
      'remember_owner = 0',
      'security_driver = "none"',
      'cgroup_controllers = [ ]',
      // No private /dev per domain: nothing here needs it, and it needs more of the host.
      'namespaces = [ ]',
      '',
    ].join('\n'),
  );
  writeFileSync(
    join(dir, 'libvirtd.conf'),
    [
      `unix_sock_dir = "${socketDir}"`,
      'auth_unix_rw = "none"',
      'auth_unix_ro = "none"',
      // Warnings and errors only: debug logging slows the daemon down a lot.
      `log_outputs = "3:file:${join(dir, 'libvirtd.log')}"`,
      '',
    ].join('\n'),
  );
  writeFileSync(join(dir, 'virtlogd.conf'), `log_outputs = "3:file:${join(dir, 'virtlogd.log')}"\n`);
  const drivers = join(dir, 'drivers');
  mkdirSync(drivers);
  for (const driver of DRIVERS) symlinkSync(join(DRIVER_DIR, `libvirt_driver_${driver}.so`), join(drivers, `libvirt_driver_${driver}.so`));
  return [
    // Its pid file in this run's directory: its default, /run/virtlogd.pid, is outside the private /run/libvirt,
    // and a second run's virtlogd (lanes run at once) could not take it and exited.
    `virtlogd --config ${quote(join(dir, 'virtlogd.conf'))} --pid-file ${quote(join(dir, 'virtlogd.pid'))} 2>>${quote(join(dir, 'virtlogd.stderr'))} &`,
    // libvirtd hands each guest's console log to virtlogd's socket: a guest started without it fails
    // ("Failed to connect socket to '/run/libvirt/virtlogd-sock'").
    'for _ in $(seq 600); do [ -S /run/libvirt/virtlogd-sock ] && break; sleep 0.1; done',
    '[ -S /run/libvirt/virtlogd-sock ] || { echo "virtlogd made no socket in 60 s" >&2; exit 1; }',
    `LIBVIRT_DRIVER_DIR=${quote(drivers)} libvirtd --config ${quote(join(dir, 'libvirtd.conf'))} --pid-file ${quote(join(dir, 'libvirtd.pid'))} 2>>${quote(join(dir, 'libvirtd.stderr'))} &`,
  ];
}

/**
 * Runs `setup` as PID 1 of new mount, network and pid namespaces (bash, which
 * reaps orphans), then keeps them until its stdin closes.
 */
async function startNamespaces(dir: string, setup: readonly string[]): Promise<GuestNetworkHost> {
  const script = [
    'set -eu',
    // /sys and /proc of the new network and pid namespaces (libvirt reads both).
    'mount -t sysfs sysfs /sys',
    ...setup,
    'echo ready',
    'read -r _ || true',
  ].join('\n');
  const holder = spawn(
    'unshare',
    ['--mount', '--net', '--pid', '--fork', '--kill-child', '--mount-proc', '--propagation', 'private', '--', 'bash', '-c', script],
    {
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  try {
    await announcedReady(holder);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const pid1 = childOf(holder.pid ?? 0);
  return {
    dir,
    leasesFile: join(dir, 'dnsmasq.leases'),
    spawn(command, args, options = {}) {
      return spawn('nsenter', ['--target', String(pid1), '--mount', '--net', '--pid', '--', command, ...args], options);
    },
    async stop() {
      await endHolder(holder);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Closes the holder's stdin (PID 1 returns, the kernel kills the namespace); SIGKILL if it lingers. */
function endHolder(holder: ChildProcess): Promise<void> {
  if (holder.exitCode !== null || holder.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => holder.kill('SIGKILL'), 20_000);
    holder.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    holder.stdin?.end();
  });
}

/**
 * The pid (as seen from here) of unshare's only child, bash: nsenter's target.
 * Found by parent pid in /proc/<pid>/stat (no /proc/<pid>/task/<pid>/children
 * on kernels without CONFIG_PROC_CHILDREN).
 */
function childOf(pid: number): number {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    // "pid (comm) state ppid …": comm may hold spaces and parentheses.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid === pid) return Number(entry);
  }
  throw new Error(`unshare (${pid}) has no child`);
}

function announcedReady(holder: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => fail(new Error(`namespaces not ready within ${PROCESS_TIMEOUT_MS} ms:\n${stderr}`)), PROCESS_TIMEOUT_MS);
    holder.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    holder.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (!stdout.includes('ready')) return;
      clearTimeout(timer);
      holder.off('exit', onExit);
      resolve();
    });
    holder.on('exit', onExit);
    holder.on('error', fail);
    function onExit(code: number | null): void {
      fail(new Error(`namespace setup exited (${code}):\n${stderr}`));
    }
    function fail(error: Error): void {
      clearTimeout(timer);
      holder.kill('SIGKILL');
      reject(error);
    }
  });
}

/** The socket accepts connections. */
async function waitUntilServing(socketPath: string, log: () => string): Promise<void> {
  const deadline = Date.now() + PROCESS_TIMEOUT_MS;
  for (;;) {
    try {
      await new Promise<void>((resolve, reject) => {
        const socket = connect(socketPath);
        socket.once('connect', () => {
          socket.destroy();
          resolve();
        });
        socket.once('error', reject);
      });
      return;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`libvirtd not serving on ${socketPath} within ${PROCESS_TIMEOUT_MS} ms (${String(error)}):\n${log()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function tail(file: string): string {
  try {
    return readFileSync(file, 'utf8').slice(-4000);
  } catch {
    return '';
  }
}

function quote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}
