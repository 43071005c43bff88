// The Proxmox VE client: one transport (keep-alive HTTPS, API token) and the
// call groups built on it. Wire protocol only (STYLE §2): no Kubernetes types,
// no runtime/ imports. Creating it makes no call; `cluster.version()` is the
// cheapest check that endpoint, CA and token work.
import { Cluster } from './cluster.js';
import { Qemu } from './qemu.js';
import { Storage } from './storage.js';
import { Tasks } from './tasks.js';
import { ProxmoxTransport, type ProxmoxTransportOptions } from './transport.js';

/** Endpoint, TLS, token, timeouts and retries; see ProxmoxTransportOptions for defaults. */
export type ProxmoxClientOptions = ProxmoxTransportOptions;

export class ProxmoxClient {
  readonly cluster: Cluster;
  readonly storage: Storage;
  readonly qemu: Qemu;
  readonly tasks: Tasks;

  /** Bad options (not https, bad token id, bad CA PEM) throw TypeError, naming no secret. */
  constructor(readonly transport: ProxmoxTransport) {
    this.cluster = new Cluster(transport);
    this.storage = new Storage(transport);
    this.qemu = new Qemu(transport);
    this.tasks = new Tasks(transport);
  }

  static create(options: ProxmoxClientOptions): ProxmoxClient {
    return new ProxmoxClient(new ProxmoxTransport(options));
  }

  get endpoint(): string {
    return this.transport.endpoint;
  }

  /** Closes pooled connections; nothing to log out of with a token. */
  close(): void {
    this.transport.close();
  }
}
