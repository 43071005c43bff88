// Finding a machine's VM by its UUID (DESIGN §3) at a cost a pass can pay.
// PVE has no lookup by smbios1 UUID, and reading every VM's config to find one
// would cost a call per VM per pass. So:
//   1. where the VM was last seen (by this process) is read first: one config
//      read, which the pass needs anyway; a VMID that now holds another VM
//      (ours deleted behind our back, the id reused) fails the UUID check;
//   2. otherwise one /cluster/resources listing, shared by every lookup of the
//      pass, narrows the candidates to VMs named like the machine or tagged with
//      its mark (vm-marks.ts), and only those configs are read.
// A VM nobody can name or tag like ours is never a candidate: a foreign VM is
// never read, let alone adopted.
import type { MachineOwner } from '../../ownership.js';
import { isBackendError, BackendErrorKind } from '../../backend-error.js';
import type { ProxmoxClient } from '../client/proxmox-client.js';
import type { VmRef } from '../client/qemu.js';
import type { ClusterResource, QemuConfig } from '../client/wire-types.js';
import { isVmOf, ownerTag, parseTags, smbiosUuid } from './vm-marks.js';

export interface FoundVm {
  readonly ref: VmRef;
  /** Read in this pass. */
  readonly config: QemuConfig;
}

export interface VmQuery {
  readonly name: string;
  readonly uuid: string;
  readonly owner: MachineOwner;
}

/** Where each machine's VM was last seen, per endpoint; forgotten when it is not there any more. */
export class VmLocator {
  private readonly seen = new Map<string, VmRef>();

  /** A view for one pass: its /cluster/resources listing is read at most once. */
  pass(client: ProxmoxClient): PassView {
    return new PassView(client, this.seen);
  }
}

export class PassView {
  private listing: Promise<ClusterResource[]> | undefined;

  constructor(
    readonly client: ProxmoxClient,
    private readonly seen: Map<string, VmRef>,
  ) {}

  /** Every VM and template of the cluster, read once per pass. */
  vms(): Promise<ClusterResource[]> {
    this.listing ??= this.client.cluster.resources('vm');
    return this.listing;
  }

  /** Remembers where the machine's VM is (a clone just started, a VM found). */
  remember(query: VmQuery, ref: VmRef): void {
    this.seen.set(this.key(query), ref);
  }

  forget(query: VmQuery): void {
    this.seen.delete(this.key(query));
  }

  /**
   * The machine's VM: `hint` (a task's VM) or the remembered place first, then
   * the candidates of the listing. A VM whose smbios1 UUID is the machine's
   * wins over one that only says so in its description (a copy of ours).
   */
  async find(query: VmQuery, hint?: VmRef): Promise<FoundVm | undefined> {
    const first = hint ?? this.seen.get(this.key(query));
    if (first) {
      const config = await this.configOf(first);
      if (config && isVmOf(config, query.uuid) && config.template !== true) return this.found(query, first, config);
      this.forget(query);
    }
    const tag = ownerTag(query.owner);
    const candidates = (await this.vms()).filter(
      (r) =>
        r.type === 'qemu' &&
        r.template !== true &&
        r.vmid !== undefined &&
        r.node !== undefined &&
        !(first && r.vmid === first.vmid) &&
        (r.name === query.name || parseTags(r.tags).some((t) => t.toLowerCase() === tag)),
    );
    let byDescription: FoundVm | undefined;
    for (const candidate of candidates) {
      const ref = { node: candidate.node ?? '', vmid: candidate.vmid ?? 0 };
      const config = await this.configOf(ref);
      if (!config || !isVmOf(config, query.uuid)) continue;
      if (smbiosUuid(config.smbios1) === query.uuid.toLowerCase()) return this.found(query, ref, config);
      byDescription ??= { ref, config };
    }
    return byDescription && this.found(query, byDescription.ref, byDescription.config);
  }

  private found(query: VmQuery, ref: VmRef, config: QemuConfig): FoundVm {
    this.remember(query, ref);
    return { ref, config };
  }

  /** The config, or undefined when there is no such VM (on that node). */
  private async configOf(ref: VmRef): Promise<QemuConfig | undefined> {
    try {
      return await this.client.qemu.config(ref);
    } catch (err) {
      if (isBackendError(err, BackendErrorKind.NotFound)) return undefined;
      throw err;
    }
  }

  private key(query: VmQuery): string {
    return `${this.client.endpoint}\n${query.uuid}`;
  }
}
