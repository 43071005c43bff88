// libvirtd as a test peer: a root daemon with its own config, sockets, state
// and log, run inside a private mount namespace. A root libvirtd keeps state
// in fixed places (/run/libvirt, /var/lib/libvirt, /var/log/libvirt,
// /var/cache/libvirt, /etc/libvirt); each of these is a bind of a directory
// of this run, so runs never collide with each other or with a host daemon.
// It listens on a unix socket (visible outside as `<dir>/run/libvirt-sock`)
// and, unless told otherwise, on 127.0.0.1 over TCP and TLS.
//
// Also used by the QEMU harness (qemu-host.ts): `startLibvirtd` with driver
// modules and config files, and `PrivateNamespace.spawn` for helpers (sshd,
// virtlogd) that must see the same /run/libvirt.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createTestPki, type IssuedCertificate, type TestPki } from '../../support/test-pki.js';

export const LOOPBACK = '127.0.0.1';
/** Every wait on a spawned process: these machines are busy and shared. */
const PROCESS_TIMEOUT_MS = 120_000;

/** The fixed directories of a root libvirtd, each bound to `<dir>/<name>` inside the namespace. */
const PRIVATE_DIRS = { run: '/run/libvirt', lib: '/var/lib/libvirt', log: '/var/log/libvirt', cache: '/var/cache/libvirt', etc: '/etc/libvirt' } as const;
/** sshd's privilege-separation directory must exist (it is empty; sshd only chroots into it). */
const SSHD_PRIVSEP_DIR = '/run/sshd';
/** Where Debian installs libvirt's loadable connection drivers. */
const DRIVER_DIR = '/usr/lib/x86_64-linux-gnu/libvirt/connection-driver';

/**
 * A mount namespace (and, optionally, a network namespace with only
 * loopback) held open by a sleeping process, with the private binds made.
 * Processes are started inside it with `spawn`.
 */
export class PrivateNamespace {
  private constructor(
    private readonly holder: ChildProcess,
    /** The holder's pid: `nsenter --target` this. */
    readonly pid: number,
    private readonly isolatesNetwork: boolean,
  ) {}

  /** Creates the namespace; `binds` maps a host directory onto a path inside it. */
  static async create(binds: Readonly<Record<string, string>>, options: { readonly isolateNetwork?: boolean } = {}): Promise<PrivateNamespace> {
    const lines = ['set -e'];
    for (const [source, target] of Object.entries(binds)) {
      // A directory mount point must exist on the shared file system; it stays empty there.
      lines.push(`[ -e ${quote(target)} ] || mkdir -p ${quote(target)}`, `mount --bind ${quote(source)} ${quote(target)}`);
    }
    lines.push(`mkdir -p ${SSHD_PRIVSEP_DIR}`);
    if (options.isolateNetwork) lines.push('ip link set lo up');
    lines.push('echo ready', 'exec sleep infinity');
    const flags = ['--mount', '--propagation', 'private', ...(options.isolateNetwork ? ['--net'] : [])];
    const holder = spawn('unshare', [...flags, '--', 'sh', '-c', lines.join('\n')], { stdio: ['ignore', 'pipe', 'pipe'] });
    await announced(holder, 'ready', 'namespace holder');
    if (holder.pid === undefined) throw new Error('namespace holder has no pid');
    return new PrivateNamespace(holder, holder.pid, options.isolateNetwork ?? false);
  }

  /** Starts `command` inside the namespace (nsenter execs it: the child's pid is the command's). */
  spawn(command: string, args: readonly string[], options: SpawnOptions = {}): ChildProcess {
    const enter = ['--target', String(this.pid), '--mount', ...(this.isolatesNetwork ? ['--net'] : []), '--'];
    return spawn('nsenter', [...enter, command, ...args], options);
  }

  /** Ends the holder; the namespace and its mounts go with the last process in it. */
  async stop(): Promise<void> {
    await stopProcess(this.holder);
  }
}

export interface LibvirtdOptions {
  /** Loadable connection drivers to load (`qemu`, `storage`, `network`…); the test driver is built in. @default [] */
  readonly driverModules?: readonly string[];
  /** Files written under the daemon's own /etc/libvirt, e.g. `{ 'qemu.conf': … }`. */
  readonly configFiles?: Readonly<Record<string, string>>;
  /** Listen on 127.0.0.1 over TCP (auth none) and TLS (client certificates). @default true */
  readonly listenNetwork?: boolean;
  /** Run in its own network namespace too (then only the unix socket is reachable from outside). @default false */
  readonly isolateNetwork?: boolean;
  /** The daemon's keepalive_interval (s) and keepalive_count. @default libvirt's 5 and 5 */
  readonly keepalive?: { readonly intervalS: number; readonly count: number };
  /** More libvirtd.conf settings; strings are quoted. */
  readonly settings?: Readonly<Record<string, string | number>>;
}

export interface Libvirtd {
  /** This run's directory (config, certificates, state, log). */
  readonly dir: string;
  readonly namespace: PrivateNamespace;
  /** The read-write unix socket, as seen from outside the namespace. */
  readonly socketPath: string;
  /** Its path inside the namespace (what virt-ssh-helper finds by default). */
  readonly socketPathInside: string;
  readonly tcpPort: number;
  readonly tlsPort: number;
  /** The CA that signed the daemon's certificate, and issues client certificates it accepts. */
  readonly pki: TestPki;
  /** A client certificate the daemon accepts. */
  readonly client: IssuedCertificate;
  /** The running daemon's pid (changes on restart). */
  readonly pid: number;
  /** SIGTERM, then start it again on the same sockets and ports. */
  restart(): Promise<void>;
  /** SIGSTOP / SIGCONT: a daemon that holds its connections open and answers nothing. */
  freeze(): void;
  thaw(): void;
  /** The tail of the daemon's log (for failure messages). */
  logTail(): string;
  /** Stops the daemon and the namespace and removes the directory. */
  stop(): Promise<void>;
}

export async function startLibvirtd(options: LibvirtdOptions = {}): Promise<Libvirtd> {
  const dir = mkdtempSync(join(tmpdir(), 'banlieue-libvirtd-'));
  let namespace: PrivateNamespace | undefined;
  try {
    const binds: Record<string, string> = {};
    for (const [name, target] of Object.entries(PRIVATE_DIRS)) {
      mkdirSync(join(dir, name));
      binds[join(dir, name)] = target;
    }
    for (const [name, content] of Object.entries(options.configFiles ?? {})) {
      mkdirSync(dirname(join(dir, 'etc', name)), { recursive: true });
      writeFileSync(join(dir, 'etc', name), content);
    }
    // The QEMU driver looks its user up before it reads qemu.conf (qemu_conf.c virQEMUDriverConfigNew):
    // Debian's account, normally made by libvirt-daemon-system, exists in this namespace only.
    binds[writeWithAccount(dir, '/etc/passwd', `${QEMU_ACCOUNT}:x:${QEMU_ID}:${QEMU_ID}:libvirt QEMU:/var/lib/libvirt:/usr/sbin/nologin`)] = '/etc/passwd';
    binds[writeWithAccount(dir, '/etc/group', `${QEMU_ACCOUNT}:x:${QEMU_ID}:`)] = '/etc/group';
    const drivers = join(dir, 'drivers');
    mkdirSync(drivers);
    // libvirtd loads every module in its driver directory: a directory of our own holds only those asked for.
    for (const module of options.driverModules ?? []) {
      symlinkSync(join(DRIVER_DIR, `libvirt_driver_${module}.so`), join(drivers, `libvirt_driver_${module}.so`));
    }
    const pki = await createTestPki(join(dir, 'etc'), 'banlieue-libvirtd-ca');
    const server = await pki.issueServer('server', LOOPBACK);
    const client = await pki.issueClient('client', 'banlieue-test-client');
    const listen = options.listenNetwork ?? true;
    const [tcpPort, tlsPort] = listen && !options.isolateNetwork ? [await freePort(), await freePort()] : [0, 0];
    const configFile = join(dir, 'libvirtd.conf');
    writeFileSync(configFile, daemonConfig({ dir, listen, tcpPort, tlsPort, caFile: pki.caFile, server, options }));
    namespace = await PrivateNamespace.create(binds, { isolateNetwork: options.isolateNetwork ?? false });
    const ns = namespace;
    const socketPath = join(dir, 'run', 'libvirt-sock');
    const launch = async (): Promise<ChildProcess> => {
      const daemon = ns.spawn('libvirtd', ['--listen', '--config', configFile, '--pid-file', join(dir, 'libvirtd.pid')], {
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...process.env, LIBVIRT_DRIVER_DIR: drivers },
      });
      await waitUntilServing(daemon, socketPath, listen ? [tcpPort, tlsPort].filter((p) => p > 0) : [], () => tail(join(dir, 'libvirtd.log')));
      return daemon;
    };
    let daemon = await launch();
    return {
      dir,
      namespace: ns,
      socketPath,
      socketPathInside: `${PRIVATE_DIRS.run}/libvirt-sock`,
      tcpPort,
      tlsPort,
      pki,
      client,
      get pid() {
        return daemon.pid ?? 0;
      },
      async restart() {
        await stopProcess(daemon);
        daemon = await launch();
      },
      freeze: () => void daemon.kill('SIGSTOP'),
      thaw: () => void daemon.kill('SIGCONT'),
      logTail: () => tail(join(dir, 'libvirtd.log')),
      async stop() {
        daemon.kill('SIGCONT');
        await stopProcess(daemon);
        await ns.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await namespace?.stop();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

interface ConfigInput {
  readonly dir: string;
  readonly listen: boolean;
  readonly tcpPort: number;
  readonly tlsPort: number;
  readonly caFile: string;
  readonly server: IssuedCertificate;
  readonly options: LibvirtdOptions;
}

function daemonConfig({ dir, listen, tcpPort, tlsPort, caFile, server, options }: ConfigInput): string {
  const settings: Record<string, string | number> = {
    listen_tcp: listen && tcpPort > 0 ? 1 : 0,
    listen_tls: listen && tlsPort > 0 ? 1 : 0,
    listen_addr: LOOPBACK,
    tcp_port: String(tcpPort),
    tls_port: String(tlsPort),
    auth_tcp: 'none',
    // The client certificate is the credential, as on a real host (upstream §3.1).
    auth_tls: 'none',
    ca_file: caFile,
    cert_file: server.certFile,
    key_file: server.keyFile,
    unix_sock_dir: PRIVATE_DIRS.run,
    auth_unix_rw: 'none',
    auth_unix_ro: 'none',
    // Warnings and errors only: debug logging slows the daemon down a lot.
    log_outputs: `3:file:${join(dir, 'libvirtd.log')}`,
    ...(options.keepalive ? { keepalive_interval: options.keepalive.intervalS, keepalive_count: options.keepalive.count } : {}),
    ...options.settings,
  };
  return Object.entries(settings)
    .map(([key, value]) => `${key} = ${typeof value === 'number' ? value : JSON.stringify(value)}`)
    .join('\n')
    .concat('\n');
}

/** The socket accepts connections and each TCP port does: the daemon serves. An exit ends the wait at once. */
async function waitUntilServing(daemon: ChildProcess, socketPath: string, ports: readonly number[], log: () => string): Promise<void> {
  let stderr = '';
  daemon.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const deadline = Date.now() + PROCESS_TIMEOUT_MS;
  for (;;) {
    if (daemon.exitCode !== null || daemon.signalCode !== null) {
      throw new Error(`libvirtd exited (${daemon.exitCode ?? daemon.signalCode}):\n${stderr}\n${log()}`);
    }
    try {
      await canConnect({ path: socketPath });
      for (const port of ports) await canConnect({ host: LOOPBACK, port });
      return;
    } catch (error) {
      if (Date.now() > deadline) {
        daemon.kill('SIGKILL');
        throw new Error(`libvirtd not serving within ${PROCESS_TIMEOUT_MS} ms (${String(error)}):\n${stderr}\n${log()}`);
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function canConnect(target: { path: string } | { host: string; port: number }): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect(target);
    socket.once('connect', () => {
      socket.destroy();
      resolve();
    });
    socket.once('error', reject);
  });
}

/** A port free on loopback now (the daemon binds it moments later). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, LOOPBACK, () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Resolves once `child` printed `word` on stdout; rejects if it exits first. */
export function announced(child: ChildProcess, word: string, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => fail(new Error(`${what} did not start within ${PROCESS_TIMEOUT_MS} ms:\n${stderr}`)), PROCESS_TIMEOUT_MS);
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (!stdout.includes(word)) return;
      clearTimeout(timer);
      child.off('exit', onExit);
      resolve();
    });
    child.on('exit', onExit);
    child.on('error', fail);
    function onExit(code: number | null): void {
      fail(new Error(`${what} exited (${code}) before it was ready:\n${stderr}`));
    }
    function fail(error: Error): void {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(error);
    }
  });
}

/** SIGTERM, SIGKILL after 20 s; resolves once it exited. */
export function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Debian's QEMU user and group (configure --with-qemu-user/--with-qemu-group), and an id free on this machine. */
const QEMU_ACCOUNT = 'libvirt-qemu';
const QEMU_ID = 64055;

/** A copy of `file` (passwd or group) with `entry` added unless its name is there already. */
function writeWithAccount(dir: string, file: string, entry: string): string {
  const copy = join(dir, file.replaceAll('/', '_'));
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '');
  if (!lines.some((line) => line.startsWith(`${QEMU_ACCOUNT}:`))) lines.push(entry);
  writeFileSync(copy, `${lines.join('\n')}\n`);
  return copy;
}

function tail(file: string): string {
  try {
    return readFileSync(file, 'utf8').slice(-4000);
  } catch {
    return '';
  }
}

function quote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}
