// QEMU VMs: list, config, clone, resize, power, delete, guest agent. Calls
// that start work answer a UPID (tasks.ts reads or waits on it).
import type { Static, TObject } from '@sinclair/typebox';
import { Endpoints } from './endpoints.js';
import type { ProxmoxTransport } from './transport.js';
import type { GuestInterface, IndexedConfigKeys, QemuConfig, QemuEntry, QemuStatus } from './wire-types.js';

/** A VM is addressed by its node and VMID. */
export interface VmRef {
  readonly node: string;
  readonly vmid: number;
}
/** An endpoint's parameters beside the VM's node and VMID. */
type VmParams<E extends { readonly params: TObject }> = Omit<Static<E['params']>, 'node' | 'vmid'>;

/** Config keys to set (`net0`, `scsi1`… included), `delete` to remove some, `digest` to refuse a concurrent change. */
export type QemuConfigChange = VmParams<typeof Endpoints.qemuConfigSync> & IndexedConfigKeys;
export type CloneParams = VmParams<typeof Endpoints.qemuClone>;
export type ShutdownParams = VmParams<typeof Endpoints.qemuShutdown>;
export type StopParams = VmParams<typeof Endpoints.qemuStop>;
export type DeleteParams = VmParams<typeof Endpoints.qemuDelete>;

export class Qemu {
  constructor(private readonly transport: ProxmoxTransport) {}

  list(node: string): Promise<QemuEntry[]> {
    return this.transport.call(Endpoints.qemuList, { node });
  }

  /** The config with pending changes applied (`current: true`: as running). */
  config(vm: VmRef, options: { current?: boolean } = {}): Promise<QemuConfig> {
    return this.transport.call(Endpoints.qemuConfig, { ...vm, ...options });
  }

  /** Changes the config at once (PUT); fails when the change needs a task (allocating a new disk): use configAsync. */
  setConfig(vm: VmRef, change: QemuConfigChange): Promise<null> {
    return this.transport.call(Endpoints.qemuConfigSync, { ...vm, ...change });
  }

  /** Changes the config (POST); a UPID when PVE had to start a task (disk allocation), null when done at once. */
  configAsync(vm: VmRef, change: QemuConfigChange): Promise<string | null> {
    return this.transport.call(Endpoints.qemuConfigAsync, { ...vm, ...change });
  }

  /** Clones `vm` (a template: linked unless `full`) to `newid`; on another node with `target`. */
  clone(vm: VmRef, params: CloneParams): Promise<string> {
    return this.transport.call(Endpoints.qemuClone, { ...vm, ...params });
  }

  /** Grows `disk` to `size` (`32G`) or by it (`+8G`); PVE never shrinks. */
  resize(vm: VmRef, disk: string, size: string): Promise<string> {
    return this.transport.call(Endpoints.qemuResize, { ...vm, disk, size });
  }

  status(vm: VmRef): Promise<QemuStatus> {
    return this.transport.call(Endpoints.qemuStatus, vm);
  }

  start(vm: VmRef): Promise<string> {
    return this.transport.call(Endpoints.qemuStart, vm);
  }

  /** ACPI shutdown: the guest decides; the task fails after `timeout` s unless `forceStop`. */
  shutdown(vm: VmRef, params: ShutdownParams = {}): Promise<string> {
    return this.transport.call(Endpoints.qemuShutdown, { ...vm, ...params });
  }

  /** Hard stop. */
  stop(vm: VmRef, params: StopParams = {}): Promise<string> {
    return this.transport.call(Endpoints.qemuStop, { ...vm, ...params });
  }

  suspend(vm: VmRef): Promise<string> {
    return this.transport.call(Endpoints.qemuSuspend, vm);
  }

  resume(vm: VmRef): Promise<string> {
    return this.transport.call(Endpoints.qemuResume, vm);
  }

  /** Destroys the VM; `purge` also drops it from backup jobs, replication and HA. It must be stopped. */
  delete(vm: VmRef, params: DeleteParams = {}): Promise<string> {
    return this.transport.call(Endpoints.qemuDelete, { ...vm, ...params });
  }

  /** The guest's interfaces as its QEMU agent reports them; fails (500) while the agent does not answer. */
  async agentInterfaces(vm: VmRef): Promise<GuestInterface[]> {
    return (await this.transport.call(Endpoints.agentInterfaces, vm)).result;
  }
}
