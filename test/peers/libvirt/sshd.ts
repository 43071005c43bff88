// Debian's sshd as a test peer for libvirt's ssh transport: on 127.0.0.1 at
// a free port, with generated host and client keys and its own config, run
// inside the libvirtd's namespace so that `virt-ssh-helper` on the far side
// finds that daemon's socket where it looks by default (/run/libvirt).
import { execFile, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { LOOPBACK, freePort, stopProcess, type PrivateNamespace } from './libvirtd.js';

const run = promisify(execFile);
const PROCESS_TIMEOUT_MS = 120_000;

export interface Sshd {
  readonly port: number;
  /** The login the client key is authorised for (the user running the tests). */
  readonly user: string;
  /** OpenSSH private key of an authorised client. */
  readonly clientKeyPem: string;
  /** OpenSSH private key that is not authorised. */
  readonly strangerKeyPem: string;
  /** `SHA256:…` of the host key, as `ssh-keygen -l` prints it. */
  readonly hostKeyFingerprint: string;
  stop(): Promise<void>;
}

/** Starts sshd in `namespace`, its files under `dir` (which must exist). */
export async function startSshd(namespace: PrivateNamespace, dir: string): Promise<Sshd> {
  const home = join(dir, 'sshd');
  mkdirSync(home);
  const file = (name: string): string => join(home, name);
  const keygen = (name: string): Promise<unknown> => run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', file(name)], { timeout: 60_000 });
  await Promise.all([keygen('host_key'), keygen('client_key'), keygen('stranger_key')]);
  writeFileSync(file('authorized_keys'), readFileSync(file('client_key.pub')));
  const port = await freePort();
  writeFileSync(
    file('sshd_config'),
    [
      `Port ${port}`,
      `ListenAddress ${LOOPBACK}`,
      `HostKey ${file('host_key')}`,
      `AuthorizedKeysFile ${file('authorized_keys')}`,
      `PidFile ${file('sshd.pid')}`,
      'PermitRootLogin prohibit-password',
      'PubkeyAuthentication yes',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'UsePAM no',
      // The keys live in a temporary directory under a world-writable /tmp.
      'StrictModes no',
      'LogLevel VERBOSE',
      '',
    ].join('\n'),
  );
  const { stdout } = await run('ssh-keygen', ['-l', '-f', file('host_key.pub')], { timeout: 60_000 });
  const hostKeyFingerprint = stdout.split(' ')[1] ?? '';
  // sshd re-executes itself, so it needs its absolute path; -D: foreground, -e: log to stderr.
  const sshd = namespace.spawn('/usr/sbin/sshd', ['-D', '-e', '-f', file('sshd_config')], { stdio: ['ignore', 'ignore', 'pipe'] });
  await untilListening(sshd, port);
  return {
    port,
    user: (await run('id', ['-un'])).stdout.trim(),
    clientKeyPem: readFileSync(file('client_key'), 'utf8'),
    strangerKeyPem: readFileSync(file('stranger_key'), 'utf8'),
    hostKeyFingerprint,
    stop: () => stopProcess(sshd),
  };
}

async function untilListening(sshd: ChildProcess, port: number): Promise<void> {
  let stderr = '';
  sshd.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const deadline = Date.now() + PROCESS_TIMEOUT_MS;
  for (;;) {
    if (sshd.exitCode !== null || sshd.signalCode !== null) throw new Error(`sshd exited (${sshd.exitCode ?? sshd.signalCode}):\n${stderr}`);
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: LOOPBACK, port });
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) {
      sshd.kill('SIGKILL');
      throw new Error(`sshd not listening on ${port} within ${PROCESS_TIMEOUT_MS} ms:\n${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
