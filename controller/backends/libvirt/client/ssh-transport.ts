// The ssh transport, as libvirt's own client does it (virnetsocket.c
// virNetSocketNewConnectSSH, proxy= rules): log in with a key, run
// virt-ssh-helper (or netcat on the daemon's socket) on the far side, and
// carry the RPC byte stream over that command's stdin/stdout.
import { createHash } from 'node:crypto';
import { userInfo } from 'node:os';
import type { Duplex } from 'node:stream';
import type { ClientChannel } from 'ssh2';
import { BackendError, BackendErrorKind } from '../../backend-error.js';
import type { LibvirtUri } from './uri.js';

export interface SshCredentials {
  /** The private key (OpenSSH or PEM), from the credentials Secret. */
  readonly privateKeyPem: string;
  /** For an encrypted key. */
  readonly passphrase?: string;
  /**
   * The host key the server must present, as `ssh-keygen -l` prints it:
   * `SHA256:<base64>`. Required unless `insecureIgnoreHostKey`.
   */
  readonly hostKeyFingerprint?: string;
  /** Accept any host key. @default false */
  readonly insecureIgnoreHostKey?: boolean;
}

export interface SshDial {
  readonly uri: LibvirtUri;
  readonly credentials: SshCredentials;
  readonly timeoutMs: number;
  readonly signal: AbortSignal | undefined;
}

const STDERR_KEPT = 2000;

/** The command run on the far side, per the URI's `proxy`, `netcat` and `socket` (libvirt's rules). */
export function remoteCommand(uri: LibvirtUri): string {
  const helper = `virt-ssh-helper ${shellQuote(uri.daemonUri)}`;
  const netcat = `${shellQuote(uri.netcat)} -U ${shellQuote(uri.socket)}`;
  if (uri.proxy === 'native') return helper;
  if (uri.proxy === 'netcat') return netcat;
  // `sh -c`: the login shell of the far side may not be a Bourne shell.
  return `sh -c ${shellQuote(`if which virt-ssh-helper >/dev/null 2>&1; then ${helper}; else ${netcat}; fi`)}`;
}

/** `SHA256:<base64 without padding>` of a raw host key, as OpenSSH prints it. */
export function hostKeyFingerprint(key: Buffer): string {
  return `SHA256:${createHash('sha256').update(key).digest('base64').replace(/=+$/, '')}`;
}

export async function dialSsh(dial: SshDial): Promise<Duplex> {
  const { uri, credentials } = dial;
  if (credentials.hostKeyFingerprint === undefined && credentials.insecureIgnoreHostKey !== true) {
    throw new TypeError('ssh: a host key fingerprint (or insecureIgnoreHostKey) is required');
  }
  const where = `${uri.host}:${uri.port}`;
  const user = uri.user ?? userInfo().username;
  // Loaded on the first ssh dial: ssh2 sets up its WebAssembly ciphers as it loads (~16 MiB reserved, ~6 MiB
  // resident), and every role holds every backend's client while only a libvirt Provider over ssh uses it.
  const { Client } = await import('ssh2');
  const client = new Client();
  return new Promise((resolve, reject) => {
    let hostKeyRejected: string | undefined;
    let settled = false;
    const fail = (error: unknown): void => {
      if (settled) return;
      settled = true;
      cleanup();
      client.end();
      reject(error);
    };
    const onAbort = (): void => fail(dial.signal?.reason ?? new DOMException('The operation was aborted', 'AbortError'));
    dial.signal?.addEventListener('abort', onAbort, { once: true });
    const cleanup = (): void => dial.signal?.removeEventListener('abort', onAbort);

    client.on('error', (error: Error & { level?: string; code?: string }) => fail(sshError(error, where, user, hostKeyRejected)));
    client.on('ready', () => {
      client.exec(remoteCommand(uri), (error, channel) => {
        if (error) {
          fail(new BackendError(BackendErrorKind.Unreachable, `ssh ${where}: cannot start the libvirt proxy: ${error.message}`, { cause: error }));
          return;
        }
        if (settled) {
          channel.close();
          return;
        }
        settled = true;
        cleanup();
        keepStderr(channel, where);
        // The channel is the connection: closing one ends the other.
        channel.on('close', () => client.end());
        client.on('close', () => channel.destroy());
        resolve(channel);
      });
    });
    client.connect({
      host: uri.host,
      port: uri.port,
      username: user,
      privateKey: credentials.privateKeyPem,
      ...(credentials.passphrase === undefined ? {} : { passphrase: credentials.passphrase }),
      readyTimeout: dial.timeoutMs,
      hostVerifier: (key: Buffer): boolean => {
        if (credentials.insecureIgnoreHostKey === true) return true;
        const seen = hostKeyFingerprint(key);
        if (seen === credentials.hostKeyFingerprint) return true;
        hostKeyRejected = seen;
        return false;
      },
    });
    if (dial.signal?.aborted) onAbort();
  });
}

/** What the far side printed on stderr becomes the error when the proxy exits non-zero (helper missing, no socket). */
function keepStderr(channel: ClientChannel, where: string): void {
  let stderr = '';
  channel.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_KEPT);
  });
  channel.on('exit', (code: number | null) => {
    if (code === 0) return;
    const detail = stderr.trim() === '' ? '' : `: ${stderr.trim()}`;
    (channel as Duplex).destroy(
      new BackendError(BackendErrorKind.Unreachable, `ssh ${where}: the libvirt proxy exited with ${code ?? 'a signal'}${detail}`, { code: 'ProxyExited' }),
    );
  });
}

function sshError(error: Error & { level?: string; code?: string }, where: string, user: string, hostKeyRejected: string | undefined): BackendError {
  if (hostKeyRejected !== undefined) {
    return new BackendError(BackendErrorKind.Unreachable, `ssh ${where}: host key ${hostKeyRejected} is not the expected one`, {
      cause: error,
      code: 'HostKeyMismatch',
    });
  }
  if (error.level === 'client-authentication') {
    return new BackendError(BackendErrorKind.Unauthorized, `ssh ${where}: the server refused the key of user "${user}"`, {
      cause: error,
      code: 'AuthenticationFailed',
    });
  }
  if (error.level === 'client-timeout') {
    return new BackendError(BackendErrorKind.Unreachable, `ssh ${where}: no SSH handshake in time`, { cause: error, code: 'Timeout' });
  }
  return new BackendError(BackendErrorKind.Unreachable, `ssh ${where}: ${error.message}`, {
    cause: error,
    ...(error.code === undefined ? {} : { code: error.code }),
  });
}

function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}
