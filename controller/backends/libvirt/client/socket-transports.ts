// The socket transports: unix, TCP and mutual TLS. Each resolves to a byte
// stream that carries libvirt RPC messages; failures leave as BackendErrors
// naming the target, never a credential.
import { connect as netConnect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect, createSecureContext, type TLSSocket } from 'node:tls';
import { BackendError, BackendErrorKind } from '../../backend-error.js';

/** The client certificate, its key and the CA that signed the daemon's certificate, as PEM. */
export interface TlsCredentials {
  /** `tls.crt`: the client certificate (the credential: libvirtd runs with `auth_tls = "none"`). */
  readonly certPem: string;
  /** `tls.key`. */
  readonly keyPem: string;
  /** `ca.crt`: the CA to verify the daemon with; public roots are never used. */
  readonly caPem: string;
}

export interface DialTarget {
  readonly host: string;
  readonly port: number;
  /** Give up after this long. */
  readonly timeoutMs: number;
  readonly signal: AbortSignal | undefined;
}

export function dialUnix(path: string, timeoutMs: number, signal: AbortSignal | undefined): Promise<Duplex> {
  return whenConnected(netConnect({ path }), 'connect', `unix socket ${path}`, timeoutMs, signal);
}

export function dialTcp(target: DialTarget): Promise<Duplex> {
  const socket = netConnect({ host: target.host, port: target.port });
  return whenConnected(socket, 'connect', `${target.host}:${target.port}`, target.timeoutMs, target.signal);
}

/**
 * TLS with the server name verified against the daemon's certificate, then
 * libvirt's confirmation byte: after the handshake the daemon checks our
 * certificate and sends `\1` if it accepts it (virnetclient.c
 * virNetClientSetTLSSession); anything else means it refused us.
 */
export async function dialTls(target: DialTarget, credentials: TlsCredentials): Promise<Duplex> {
  const where = `${target.host}:${target.port}`;
  let context;
  try {
    context = createSecureContext({ cert: credentials.certPem, key: credentials.keyPem, ca: credentials.caPem });
  } catch (cause) {
    // Node's message names the PEM block that failed to parse, not its content.
    throw new BackendError(BackendErrorKind.Unauthorized, `TLS credentials for ${where} are not usable: ${(cause as Error).message}`, {
      cause,
      code: 'BadCredentials',
    });
  }
  const socket = tlsConnect({ host: target.host, port: target.port, secureContext: context, servername: isIp(target.host) ? undefined : target.host });
  const started = Date.now();
  const secure = await whenConnected(socket, 'secureConnect', where, target.timeoutMs, target.signal);
  await confirmation(secure as TLSSocket, where, Math.max(target.timeoutMs - (Date.now() - started), 1), target.signal);
  return secure;
}

function confirmation(socket: TLSSocket, where: string, timeoutMs: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const refused = (detail: string, cause?: unknown): BackendError =>
      new BackendError(BackendErrorKind.Unauthorized, `libvirtd at ${where} refused our client certificate (${detail})`, {
        code: 'ClientCertificateRefused',
        ...(cause === undefined ? {} : { cause }),
      });
    const done = settle(socket, timeoutMs, signal, reject, `no TLS confirmation from ${where} within ${timeoutMs} ms`);
    socket.once('readable', function read(): void {
      const byte = socket.read(1) as Buffer | null;
      if (byte === null) {
        socket.once('readable', read);
        return;
      }
      done.finish();
      if (byte[0] === 1) resolve();
      else {
        socket.destroy();
        reject(refused(`confirmation byte ${byte[0]}`));
      }
    });
    socket.once('error', (error) => done.fail(refused(error.message, error)));
    socket.once('end', () => done.fail(refused('it closed the connection')));
  });
}

function whenConnected(socket: Socket, event: 'connect' | 'secureConnect', where: string, timeoutMs: number, signal: AbortSignal | undefined): Promise<Duplex> {
  return new Promise((resolve, reject) => {
    const done = settle(socket, timeoutMs, signal, reject, `no connection to ${where} within ${timeoutMs} ms`);
    socket.once(event, () => {
      done.finish();
      resolve(socket);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => {
      done.fail(
        new BackendError(BackendErrorKind.Unreachable, `cannot reach libvirtd at ${where}: ${error.message}`, {
          cause: error,
          ...(error.code === undefined ? {} : { code: error.code }),
        }),
      );
    });
  });
}

/** A deadline and the caller's signal around one connection step; `fail` destroys the socket. */
function settle(
  socket: Socket,
  timeoutMs: number,
  signal: AbortSignal | undefined,
  reject: (error: unknown) => void,
  timeoutMessage: string,
): { finish(): void; fail(error: unknown): void } {
  let settled = false;
  const timer = setTimeout(() => fail(new BackendError(BackendErrorKind.Unreachable, timeoutMessage, { code: 'Timeout' })), timeoutMs);
  timer.unref();
  const onAbort = (): void => fail(signal?.reason ?? new DOMException('The operation was aborted', 'AbortError'));
  signal?.addEventListener('abort', onAbort, { once: true });
  if (signal?.aborted) onAbort();
  function finish(): void {
    settled = true;
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
  function fail(error: unknown): void {
    if (settled) return;
    finish();
    socket.destroy();
    reject(error);
  }
  return { finish, fail };
}

function isIp(host: string): boolean {
  return /^[\d.]+$/.test(host) || host.includes(':');
}
