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
// never read, let alone adopted. A candidate is the machine's by its smbios1
// UUID; only a machine not known to be provisioned also takes a clone of ours
// not yet configured, named by its description (vm-marks.ts `matchVm`): a
// provisioned machine's VM had its smbios1 set before it first booted, so a VM
// that names it only in its description is a copy (a PVE clone of it), and
// the machine whose own VM is gone reports it (docs/adr/0022-when-banlieue-destroys-a-vm.md, row 21).
import type { MachineOwner } from '../../ownership.js';
import { isBackendError, BackendErrorKind } from '../../backend-error.js';
import type { ProxmoxClient } from '../client/proxmox-client.js';
import type { VmRef } from '../client/qemu.js';
import type { ClusterResource, QemuConfig } from '../client/wire-types.js';
import { matchVm, ownerTag, parseTags, type VmMatch } from './vm-marks.js';

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

export interface FindOptions {
  /** A VM to read first: the one the machine's last task worked on. */
  readonly hint?: VmRef | undefined;
  /**
   * The machine was provisioned: only a VM with its smbios1 UUID is its VM, never one that names it
   * in its description only. @default false (not known, e.g. in a deletion: a clone of ours not yet
   * configured is found too, so that it is not left behind)
   */
  readonly provisioned?: boolean;
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
   * wins over a clone of ours not yet configured; a provisioned machine takes
   * only the former.
   */
  async find(query: VmQuery, { hint, provisioned = false }: FindOptions = {}): Promise<FoundVm | undefined> {
    const matchOf = (config: QemuConfig): VmMatch | undefined => {
      const match = matchVm(config, query.uuid, query.owner);
      return match === 'UnconfiguredClone' && provisioned ? undefined : match;
    };
    const first = hint ?? this.seen.get(this.key(query));
    if (first) {
      const config = await this.configOf(first);
      if (config && matchOf(config) && config.template !== true) return this.found(query, first, config);
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
    let unconfigured: FoundVm | undefined;
    for (const candidate of candidates) {
      const ref = { node: candidate.node ?? '', vmid: candidate.vmid ?? 0 };
      const config = await this.configOf(ref);
      const match = config && matchOf(config);
      if (!config || !match) continue;
      if (match === 'Identity') return this.found(query, ref, config);
      unconfigured ??= { ref, config };
    }
    return unconfigured && this.found(query, unconfigured.ref, unconfigured.config);
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
