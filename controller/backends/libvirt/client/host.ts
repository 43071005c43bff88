// The connection's host: what the daemon runs and what the machine has.
// A Provider's discovery reads these (hostname for the failure domain label,
// CPUs and free memory for its capacity).
import type { RpcCaller } from './rpc-caller.js';
import { Procedures } from './procedures.js';

export interface NodeInfo {
  /** CPU model, e.g. `x86_64`. */
  readonly model: string;
  readonly memoryKiB: number;
  /** Active CPUs. */
  readonly cpus: number;
  readonly mhz: number;
  readonly numaNodes: number;
  readonly sockets: number;
  readonly cores: number;
  readonly threads: number;
}

/** A libvirt version: major * 1,000,000 + minor * 1,000 + micro, split. */
export interface Version {
  readonly major: number;
  readonly minor: number;
  readonly micro: number;
}

export class Host {
  constructor(private readonly rpc: RpcCaller) {}

  async hostname(): Promise<string> {
    return (await this.rpc.call(Procedures.connectGetHostname, undefined)).hostname;
  }

  /** The URI the daemon opened, e.g. `qemu:///system`. */
  async uri(): Promise<string> {
    return (await this.rpc.call(Procedures.connectGetUri, undefined)).uri;
  }

  /** The driver's name: `QEMU`, `Test`. */
  async hypervisorType(): Promise<string> {
    return (await this.rpc.call(Procedures.connectGetType, undefined)).type;
  }

  /** The daemon's libvirt version. */
  async libVersion(): Promise<Version> {
    return toVersion((await this.rpc.call(Procedures.connectGetLibVersion, undefined)).lib_ver);
  }

  /** The hypervisor's version (QEMU's for the QEMU driver). */
  async hypervisorVersion(): Promise<Version> {
    return toVersion((await this.rpc.call(Procedures.connectGetVersion, undefined)).hv_ver);
  }

  async nodeInfo(): Promise<NodeInfo> {
    const info = await this.rpc.call(Procedures.nodeGetInfo, undefined);
    // char model[32]: NUL-terminated C string, one char per XDR unit.
    const end = info.model.indexOf(0);
    const model = String.fromCharCode(...info.model.slice(0, end === -1 ? undefined : end).map((c) => c & 0xff));
    return {
      model,
      memoryKiB: Number(info.memory),
      cpus: info.cpus,
      mhz: info.mhz,
      numaNodes: info.nodes,
      sockets: info.sockets,
      cores: info.cores,
      threads: info.threads,
    };
  }

  /** Free memory of the host, in bytes. */
  async freeMemoryBytes(): Promise<number> {
    return Number((await this.rpc.call(Procedures.nodeGetFreeMemory, undefined)).freeMem);
  }
}

function toVersion(encoded: bigint): Version {
  const value = Number(encoded);
  return { major: Math.floor(value / 1_000_000), minor: Math.floor(value / 1000) % 1000, micro: value % 1000 };
}
