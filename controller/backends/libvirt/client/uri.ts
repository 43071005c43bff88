// libvirt connection URIs (https://libvirt.org/uri.html, remote driver):
// `driver[+transport]://[user@][host][:port]/path[?params]`. The transport
// part and the client-side parameters are ours; what is left is the URI the
// daemon opens (CONNECT_OPEN), e.g. `qemu+tls://h/system` → `qemu:///system`.

export type Transport = 'unix' | 'tcp' | 'tls' | 'ssh';

export interface LibvirtUri {
  /** The hypervisor driver: `qemu`, `test`… */
  readonly driver: string;
  readonly transport: Transport;
  /** Host name or address (IPv6 without brackets); empty for unix. */
  readonly host: string;
  /** The port to dial; the transport's default when the URI has none (16514 TLS, 16509 TCP, 22 SSH). */
  readonly port: number;
  /** User name (SSH). */
  readonly user: string | undefined;
  /** The URI sent in CONNECT_OPEN: driver, path and the daemon's own parameters. */
  readonly daemonUri: string;
  /**
   * The daemon's unix socket: on this machine for unix, on the far side for
   * ssh's netcat proxy. @default /var/run/libvirt/libvirt-sock
   */
  readonly socket: string;
  /** ssh: `auto` (virt-ssh-helper if the far side has it, else netcat), `native` or `netcat`. */
  readonly proxy: 'auto' | 'native' | 'netcat';
  /** ssh: the netcat binary on the far side. @default nc */
  readonly netcat: string;
  /** ssh: a private key file on this machine (when no key is given as PEM). */
  readonly keyfile: string | undefined;
}

const DEFAULT_PORT: Readonly<Record<Transport, number>> = { unix: 0, tcp: 16509, tls: 16514, ssh: 22 };
/** The legacy libvirtd socket, as libvirt's client defaults to it (remote_sockets.c). */
const DEFAULT_SOCKET = '/var/run/libvirt/libvirt-sock';
/** Parameters the remote driver consumes itself and never sends to the daemon (remote_driver.c). */
const CLIENT_PARAMS = new Set([
  'name',
  'command',
  'socket',
  'auth',
  'netcat',
  'keyfile',
  'sshauth',
  'no_verify',
  'no_tty',
  'pkipath',
  'known_hosts',
  'known_hosts_verify',
  'tls_priority',
  'mode',
  'proxy',
]);
const TRANSPORTS = new Set<string>(['unix', 'tcp', 'tls', 'ssh']);

/** Parses a libvirt URI; throws TypeError naming what is wrong (the URI carries no secret). */
export function parseLibvirtUri(text: string): LibvirtUri {
  const url = urlOf(text);
  const { driver, transport, host } = endpointOf(text, url);
  if (url.password !== '') throw new TypeError(`libvirt URI must not carry a password`);
  const params = url.searchParams;
  return {
    driver,
    transport,
    host,
    port: url.port === '' ? DEFAULT_PORT[transport] : Number(url.port),
    user: url.username === '' ? undefined : decodeURIComponent(url.username),
    daemonUri: params.get('name') ?? `${driver}://${url.pathname}${daemonQuery(params)}`,
    socket: params.get('socket') ?? DEFAULT_SOCKET,
    proxy: proxyOf(text, params),
    netcat: params.get('netcat') ?? 'nc',
    keyfile: params.get('keyfile') ?? undefined,
  };
}

function urlOf(text: string): URL {
  try {
    return new URL(text);
  } catch {
    throw new TypeError(`libvirt URI "${text}" is not a URI`);
  }
}

/** The driver and transport of the scheme, and the host (IPv6 without brackets) the transport allows. */
function endpointOf(text: string, url: URL): Pick<LibvirtUri, 'driver' | 'transport' | 'host'> {
  const scheme = url.protocol.slice(0, -1);
  const [driver = '', explicit, ...rest] = scheme.split('+');
  if (driver === '' || rest.length > 0) throw new TypeError(`libvirt URI "${text}": scheme "${scheme}" is not driver[+transport]`);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  // As libvirt: no transport means TLS to a named host, the local socket otherwise.
  const transport = explicit ?? (host === '' ? 'unix' : 'tls');
  if (!isTransport(transport)) throw new TypeError(`libvirt URI "${text}": transport "${transport}" is not one of unix, tcp, tls, ssh`);
  if (transport === 'unix' && host !== '') throw new TypeError(`libvirt URI "${text}": a unix URI names no host`);
  if (transport !== 'unix' && host === '') throw new TypeError(`libvirt URI "${text}": transport ${transport} needs a host`);
  return { driver, transport, host };
}

function isTransport(transport: string): transport is Transport {
  return TRANSPORTS.has(transport);
}

/** The query of the daemon's own parameters, empty when there are none. */
function daemonQuery(params: URLSearchParams): string {
  const daemonParams = [...params].filter(([key]) => !CLIENT_PARAMS.has(key));
  return daemonParams.length === 0 ? '' : `?${new URLSearchParams(daemonParams).toString()}`;
}

function proxyOf(text: string, params: URLSearchParams): LibvirtUri['proxy'] {
  const proxy = params.get('proxy') ?? 'auto';
  if (proxy !== 'auto' && proxy !== 'native' && proxy !== 'netcat')
    throw new TypeError(`libvirt URI "${text}": proxy "${proxy}" is not auto, native or netcat`);
  return proxy;
}
