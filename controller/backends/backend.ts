// What a provider role needs from a backend. A backend is a folder under
// controller/backends/ whose descriptor (descriptor.ts) creates this; adding
// one touches no reconciler (STYLE §2, docs/adr/0014-backend-descriptors.md).
import type { FailureDomainStatus, Provider } from '../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { ImageSource } from '../../infra/api/banlieue.io/v1alpha1/vm-image.js';
import type { MachineAddress, PowerState } from '../../infra/api/common.js';
import type { Logger } from '../runtime/log.js';

/** Whether an image source is usable on one Provider (its VMImage status row). */
export interface ImageResolution {
  readonly ready: boolean;
  /** Backend reference of the image (template path, VMID, volume). */
  readonly resolvedRef?: string;
  /** CamelCase reason when not ready, e.g. TemplateNotFound. */
  readonly reason?: string;
  readonly message?: string;
}

/** How to reach one backend instance, resolved from the Provider and its Secret. */
export interface Connection {
  readonly endpoint: string;
  /** The credentials Secret's data, decoded; never logged. */
  readonly credentials: Readonly<Record<string, string>>;
  readonly caPem?: string;
  readonly insecureSkipTLSVerify: boolean;
}

/** What a role gives the backend it creates: hooks into its metrics. */
export interface BackendContext {
  /** Told of every call to the backend: its method, how it ended, how long it took. */
  readonly onCall?: (method: string, outcome: 'ok' | 'fault' | 'error', seconds: number) => void;
}

/** One provider role's backend instance (it owns its sessions); `Spec` is its machine kind's spec. */
export interface Backend<Spec = unknown> {
  /** Connect and read what the backend offers; throws BackendError. */
  discover(provider: Provider, connection: Connection): Promise<FailureDomainStatus[]>;
  /** Find an image source on the backend; throws BackendError when it cannot tell. */
  resolveImage(provider: Provider, connection: Connection, source: ImageSource): Promise<ImageResolution>;
  /** The backend's machine kind (VSphereMachine…): its spec is what `ensure` reads. */
  readonly machines: MachineBackend<Spec>;
  /** Release what the backend keeps between passes (sessions, sockets) when the role stops. */
  close(): Promise<void>;
}

/** One machine as a provider role hands it to its backend. */
export interface MachineRequest<Spec> {
  readonly name: string;
  readonly namespace: string;
  /** The VM's UUID, from spec.providerID: it is created with it and found again by it (DESIGN §3). */
  readonly uuid: string;
  readonly providerID: string;
  readonly spec: Spec;
  /** Placement facts of the failure domain (datacenter, cluster, node…). */
  readonly raw: Readonly<Record<string, string>>;
  /** Rendered user-data; only read before the first boot. */
  readonly userData: string | undefined;
}

/** What a backend did in one pass; the provider turns these into Events. */
export type MachineAction = 'Created' | 'Adopted' | 'GuestDataWritten' | 'Reconfigured' | 'PoweredOn' | 'PoweredOff' | 'Suspended';

/** The VM as found after a pass. */
export interface MachineObservation {
  /** Backend reference, e.g. the vSphere moref `vm-42`. */
  readonly ref: string;
  readonly powerState: PowerState;
  readonly addresses: readonly MachineAddress[];
  readonly actions: readonly MachineAction[];
  /** Backend-specific status fields of the machine kind, e.g. vmRef and biosUuid. */
  readonly statusFields: Readonly<Record<string, string>>;
  /** Spec changes the VM does not have yet and why, e.g. CPUs waiting for a power-off. */
  readonly pending?: string;
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
}

/** A backend's machine kind: find-or-create by UUID, converge power, destroy. */
export interface MachineBackend<Spec> {
  /**
   * Converge the VM of `request`: found by UUID (an orphan from an earlier
   * crash is adopted), created when absent and allowed, powered as asked.
   * Undefined when it is absent and may not be created. Throws BackendError.
   */
  ensure(connection: Connection, request: MachineRequest<Spec>, options: EnsureOptions): Promise<MachineObservation | undefined>;
  /** Power off and delete the VM; an absent VM is success. Resolves to whether there was one. Throws BackendError. */
  destroy(connection: Connection, request: MachineRequest<Spec>, log: Logger): Promise<boolean>;
}
