// Opening a connection as libvirt's remote driver does (remote_driver.c
// doRemoteOpen): dial the transport, AUTH_LIST, ask for keepalive,
// CONNECT_OPEN with the daemon-side URI, then read back the URI it opened.
import type { Duplex } from 'node:stream';
import { BackendError, BackendErrorKind } from '../../backend-error.js';
import { startKeepalive, type KeepaliveOptions } from './keepalive.js';
import { Procedures } from './procedures.js';
import { RpcConnection, type EventListener } from './rpc-connection.js';
import { dialTcp, dialTls, dialUnix, type TlsCredentials } from './socket-transports.js';
import { dialSsh, type SshCredentials } from './ssh-transport.js';
import type { LibvirtUri } from './uri.js';

export interface DialOptions {
  readonly uri: LibvirtUri;
  /** Required for tls. */
  readonly tls: TlsCredentials | undefined;
  /** Required for ssh. */
  readonly ssh: SshCredentials | undefined;
  readonly connectTimeoutMs: number;
  /** Our PINGs; `false`: none (the daemon's PINGs are answered either way). */
  readonly keepalive: KeepaliveOptions | false;
  readonly onEvent: EventListener;
}

/** remote_auth_type. */
const AuthType = { None: 0, Sasl: 1, Polkit: 2 } as const;
/** VIR_DRV_FEATURE_PROGRAM_KEEPALIVE (libvirt_internal.h): the daemon pings us and expects PONGs. */
const FEATURE_PROGRAM_KEEPALIVE = 10;

/** A connection, opened on the daemon's side; handshake failures close it. */
export async function openConnection(options: DialOptions, signal: AbortSignal | undefined): Promise<{ connection: RpcConnection; uri: string }> {
  const stream = await dial(options, signal);
  const connection = new RpcConnection(stream, describe(options.uri), options.onEvent);
  // A daemon (or ssh proxy) that accepts the connection but never answers must not hold the caller.
  const deadline = setTimeout(() => {
    const message = `no handshake with libvirtd at ${connection.target} within ${options.connectTimeoutMs} ms`;
    connection.close(new BackendError(BackendErrorKind.Unreachable, message, { code: 'Timeout' }));
  }, options.connectTimeoutMs);
  deadline.unref();
  try {
    const { types } = await connection.call(Procedures.authList, undefined, signal);
    if (types.length > 0 && !types.includes(AuthType.None)) {
      const names = types.map((t) => Object.entries(AuthType).find(([, v]) => v === t)?.[0] ?? String(t));
      throw new BackendError(
        BackendErrorKind.Unauthorized,
        `libvirtd at ${connection.target} requires ${names.join('/')} authentication; this client authenticates by transport only (TLS certificate, SSH key)`,
        {
          code: 'AuthUnsupported',
        },
      );
    }
    if (options.keepalive) {
      const { supported } = await connection.call(Procedures.connectSupportsFeature, { feature: FEATURE_PROGRAM_KEEPALIVE }, signal);
      if (supported === 1) startKeepalive(connection, options.keepalive);
    }
    await connection.call(Procedures.connectOpen, { name: options.uri.daemonUri, flags: 0 }, signal);
    const { uri } = await connection.call(Procedures.connectGetUri, undefined, signal);
    return { connection, uri };
  } catch (error) {
    connection.close();
    throw error;
  } finally {
    clearTimeout(deadline);
  }
}

function dial(options: DialOptions, signal: AbortSignal | undefined): Promise<Duplex> {
  const { uri, connectTimeoutMs: timeoutMs } = options;
  const target = { host: uri.host, port: uri.port, timeoutMs, signal };
  switch (uri.transport) {
    case 'unix':
      return dialUnix(uri.socket, timeoutMs, signal);
    case 'tcp':
      return dialTcp(target);
    case 'tls':
      if (!options.tls) throw new TypeError(`${uri.driver}+tls: TLS credentials (tls.crt, tls.key, ca.crt) are required`);
      return dialTls(target, options.tls);
    case 'ssh':
      if (!options.ssh) throw new TypeError(`${uri.driver}+ssh: an SSH private key is required`);
      return dialSsh({ uri, credentials: options.ssh, timeoutMs, signal });
  }
}

function describe(uri: LibvirtUri): string {
  if (uri.transport === 'unix') return `unix socket ${uri.socket}`;
  const host = uri.host.includes(':') ? `[${uri.host}]` : uri.host;
  return `${uri.transport}://${host}:${uri.port}`;
}
