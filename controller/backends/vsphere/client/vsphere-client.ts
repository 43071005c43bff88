// The vSphere client: one logged-in session and the services built on it.
// Wire protocol only (STYLE §2): no Kubernetes types, no runtime/ imports.
import { Inventory } from './inventory.js';
import { PropertyCollector } from './property-collector.js';
import { SearchIndex } from './search-index.js';
import { VsphereSession, type SessionOptions } from './session.js';
import { Tasks } from './tasks.js';
import type { AboutInfo } from './vim-types.js';
import { VirtualMachines } from './virtual-machines.js';

/** Endpoint, TLS, timeout and credentials; see SoapTransportOptions for defaults. */
export type VsphereClientOptions = SessionOptions;

export class VsphereClient {
  readonly properties: PropertyCollector;
  readonly inventory: Inventory;
  readonly search: SearchIndex;
  readonly tasks: Tasks;
  readonly vms: VirtualMachines;

  private constructor(readonly session: VsphereSession) {
    this.properties = new PropertyCollector(session);
    this.inventory = new Inventory(session.serviceContent, this.properties);
    this.search = new SearchIndex(session);
    this.tasks = new Tasks(this.properties);
    this.vms = new VirtualMachines(session, this.properties, this.tasks);
  }

  /**
   * Connects and logs in. Throws BackendError: Unauthorized for wrong
   * credentials, Unreachable for network or TLS trouble (its `code` is Node's,
   * e.g. `DEPTH_ZERO_SELF_SIGNED_CERT`). Bad options throw TypeError.
   */
  static async connect(options: VsphereClientOptions): Promise<VsphereClient> {
    return new VsphereClient(await VsphereSession.open(options));
  }

  get about(): AboutInfo {
    return this.session.serviceContent.about;
  }

  /** Logs out and closes connections. */
  close(): Promise<void> {
    return this.session.close();
  }

  /** Closed (or closing): what runs on the client for its lifetime stops. */
  get closed(): boolean {
    return this.session.closed;
  }
}
