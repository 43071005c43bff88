// What a provider role needs from a backend. A backend is a folder under
// controller/backends/ whose descriptor (descriptor.ts) creates this; adding
// one touches no reconciler (STYLE §2, docs/adr/0014-backend-descriptors.md).
import type { FailureDomainStatus, Provider } from '../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { ImageSource } from '../../infra/api/banlieue.io/v1alpha1/vm-image.js';
import type { MachineAddress, PowerState } from '../../infra/api/machine-fields.js';
import type { Reason } from '../../infra/api/conditions.js';
import type { Logger } from '../runtime/log.js';
import type { MachineOwner } from './ownership.js';
import type { UserData } from './user-data-bytes.js';

/** Whether an image source is usable on one Provider (its VMImage status row). */
export interface ImageResolution {
  readonly ready: boolean;
  /** Backend reference of the image (template path, VMID, volume). */
  readonly resolvedRef?: string;
  /** Why it is not ready. */
  readonly reason?: Reason;
  readonly message?: string;
}

/** What discovery found: the failure domains, and why they were withdrawn when the backend publishes none on purpose. */
export interface Discovery {
  readonly failureDomains: FailureDomainStatus[];
  /** The backend is reachable but takes no new VM (e.g. over a capacity threshold): Ready=False with this reason. */
  readonly withdrawn?: { readonly reason: Reason; readonly message: string };
}

/** How to reach one backend instance, resolved from the Provider and its Secret. */
export interface Connection {
  readonly endpoint: string;
  /** The credentials Secret's data, decoded; never logged. */
  readonly credentials: Readonly<Record<string, string>>;
  readonly caPem?: string;
  readonly insecureSkipTLSVerify: boolean;
}

/** What a role gives the backend it creates: hooks into its metrics and its machines' queue. */
export interface BackendContext {
  /** Told of every call to the backend: its method, how it ended, how long it took. */
  readonly onCall?: (method: string, outcome: 'ok' | 'fault' | 'error', seconds: number) => void;
  /** For a backend that watches its VMs: the machine whose VM has this UUID looks again now. */
  readonly wake?: (uuid: string) => void;
  readonly log?: Logger;
}

/** One provider role's backend instance (it owns its sessions); `Spec` is its machine kind's spec. */
export interface Backend<Spec = unknown> {
  /**
   * Connect and read what the backend offers; throws BackendError. `signal` cuts it short when the role stops.
   * A backend that may withdraw its failure domains (over capacity) says why in `withdrawn`.
   */
  discover(provider: Provider, connection: Connection, signal?: AbortSignal): Promise<Discovery>;
  /** Find an image source on the backend; throws BackendError when it cannot tell. */
  resolveImage(provider: Provider, connection: Connection, source: ImageSource, signal?: AbortSignal): Promise<ImageResolution>;
  /** The backend's machine kind (VSphereMachine…): its spec is what `ensure` reads. */
  readonly machines: MachineBackend<Spec>;
  /** Release what the backend keeps between passes (sessions, sockets) when the role stops. */
  close(): Promise<void>;
  /**
   * Finish the deletions that began on the backend and whose machines went before they ended
   * (optional; the role calls it after its caches synced and every rediscovery period). Only VMs
   * whose mark `judge` calls `Orphaned` may go, only when their deletion began (a machine gone
   * without one was moved, or let go by hand: its disks are nobody's to destroy), and never one
   * still running.
   */
  sweep?(judge: (owner: MachineOwner) => MarkJudgement, log: Logger, signal?: AbortSignal): Promise<void>;
}

/** What the role knows of a machine a mark names: it exists, it is gone, or it is not the role's to judge (another namespace or kind). */
export type MarkJudgement = 'Owned' | 'Orphaned' | 'Foreign';

/** One machine as a provider role hands it to its backend. */
export interface MachineRequest<Spec> {
  readonly name: string;
  readonly namespace: string;
  /** The VM's UUID, from spec.providerID: it is created with it and found again by it (DESIGN §3). */
  readonly uuid: string;
  readonly providerID: string;
  /** The machine object: the mark its VM carries (ownership.ts), checked before any change. */
  readonly owner: MachineOwner;
  readonly spec: Spec;
  /** Placement facts of the failure domain (datacenter, cluster, node…). */
  readonly raw: Readonly<Record<string, string>>;
  /**
   * The backend's block of its Provider's spec (`spec.<backend>`, e.g. spec.vsphere), as whoever
   * may write the Provider set it; unset when it has none. What it allows is never read from a
   * status, which other identities may write.
   */
  readonly providerSettings?: Readonly<Record<string, unknown>>;
  /** Rendered user-data, as bytes (gzip stays gzip); only read before the first boot. */
  readonly userData: UserData | undefined;
  /** The backend task an earlier pass started and has not seen finish (status.taskRef). */
  readonly taskRef?: string;
}

/** What a backend did in one pass; the provider turns these into Events. */
export type MachineAction = 'CreateStarted' | 'Created' | 'Adopted' | 'GuestDataWritten' | 'Reconfigured' | 'PoweredOn' | 'PoweredOff' | 'Suspended';

/** The VM as found after a pass. */
export interface MachineObservation {
  /** Backend reference, e.g. the vSphere moref `vm-42`. */
  readonly ref: string;
  readonly powerState: PowerState;
  readonly addresses: readonly MachineAddress[];
  /** The VM has no network interface, so no address will ever come: Ready without one. */
  readonly withoutNetwork?: boolean;
  /** A change of the VM's guest addresses wakes its machine (BackendContext.wake): waiting for an address needs no poll. */
  readonly watched?: boolean;
  readonly actions: readonly MachineAction[];
  /** Backend-specific status fields of the machine kind, e.g. vmRef and biosUuid. */
  readonly statusFields: Readonly<Record<string, string | number>>;
  /** Spec changes the VM does not have yet and why, e.g. CPUs waiting for a power-off. */
  readonly pending?: string;
  /** What happened behind banlieue's back and was repaired this pass (a VM restarted after it died): Warning Events. */
  readonly warnings?: readonly { readonly reason: Reason; readonly message: string }[];
}

export interface EnsureOptions {
  /** False once the machine was provisioned: a VM gone since then is reported, never re-created. */
  readonly mayCreate: boolean;
  /** True until provisioned: write the guest's data (user-data, metadata) before it first boots. */
  readonly firstBoot: boolean;
  /** The spec changed since the last pass that reached the backend: compare what can change in place (CPU, memory, disks). */
  readonly specChanged: boolean;
  /** For what an operator should see (a clone started, with its task). */
  readonly log: Logger;
  /** Aborts when the role stops: every backend call of the pass ends promptly. */
  readonly signal?: AbortSignal;
}

/**
 * What one pass found. A long backend task (a clone) is started and reported
 * `InProgress`, never awaited: the provider records `taskRef` in status and
 * asks again on a later pass, so no worker waits on the backend (ADR 14).
 */
export type EnsureResult =
  /** No VM, and it may not be created (it was provisioned once and is gone). */
  | { readonly state: 'Absent' }
  /** `reason`: what the task does, for Ready=False. @default Provisioning */
  | { readonly state: 'InProgress'; readonly taskRef: string; readonly message: string; readonly actions: readonly MachineAction[]; readonly reason?: Reason }
  | { readonly state: 'Present'; readonly observation: MachineObservation };

/** What a deletion pass found: the VM gone (and whether there was one), or a task creating it still running. */
export type DestroyResult =
  { readonly state: 'Gone'; readonly existed: boolean } | { readonly state: 'InProgress'; readonly message: string; readonly reason?: Reason };

export interface DestroyOptions {
  readonly log: Logger;
  readonly signal?: AbortSignal;
}

/**
 * What a release found (spec.deletionPolicy Retain): the VM left as it is without this machine's
 * mark (`ref`: its backend reference, e.g. the vSphere moref), no VM at all, or a task creating it
 * still running.
 */
export type ReleaseResult =
  | { readonly state: 'Released'; readonly ref: string }
  | { readonly state: 'Absent' }
  | { readonly state: 'InProgress'; readonly message: string; readonly reason?: Reason };

/**
 * A backend's machine kind: find-or-create by UUID, converge power, destroy or release. Every
 * backend builds it from its small steps with `machineBackend` (kit/machine/), the one recipe
 * that checks the VM's ownership mark on every pass, after every task and before every change.
 */
export interface MachineBackend<Spec> {
  /**
   * Converge the VM of `request`: found by UUID (an orphan from an earlier
   * crash is adopted), its creation started when absent and allowed (and
   * picked up by `request.taskRef` on later passes), powered as asked.
   * Throws BackendError; a task that ended in error throws TaskFailed.
   */
  ensure(connection: Connection, request: MachineRequest<Spec>, options: EnsureOptions): Promise<EnsureResult>;
  /**
   * Power off and delete the VM; an absent VM is success. A task still creating
   * it (request.taskRef) is waited out (InProgress), never left to finish
   * after the machine is gone. Throws BackendError; NotOwned for a VM not this machine's.
   */
  destroy(connection: Connection, request: MachineRequest<Spec>, options: DestroyOptions): Promise<DestroyResult>;
  /**
   * Let the VM go without destroying it (spec.deletionPolicy Retain): found by UUID, a task still
   * creating it waited out (InProgress) as `destroy` does, its ownership mark checked, then
   * removed (ownership.ts `decideRelease`), so that no adoption, sweep or destroy of banlieue
   * touches it again. Power, disks and configuration stay as they are. Releasing a VM this
   * machine released already is success. Throws BackendError; NotOwned for a VM not this machine's.
   */
  release(connection: Connection, request: MachineRequest<Spec>, options: DestroyOptions): Promise<ReleaseResult>;
}
