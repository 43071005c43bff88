// What a backend's builder starts from: a placed VirtualMachine, checked and
// resolved once by the controller (hardware with overrides, NIC addressing,
// image reference, per-disk and per-NIC backend targets, metadata and the
// contract spec fields), so each backend only maps it onto its own kind. Pure.
import type { VirtualMachine } from '../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import type { ClassDisk, ClassInterface, VMClass } from '../../infra/api/banlieue.io/v1alpha1/vm-class.js';
import type { VMImage } from '../../infra/api/banlieue.io/v1alpha1/vm-image.js';
import type { Ipam } from '../../infra/api/addressing.js';
import type { InfraMachineContractSpec } from '../../infra/api/infrastructure.banlieue.io/v1alpha1/infra-machine.js';
import type { ObjectMeta } from '../../infra/api/kind.js';

/** Contract fields every machine kind shares, as the controller sets them (never providerID: the provider writes it). */
export type CommonMachineSpec = Pick<
  InfraMachineContractSpec,
  'providerRef' | 'failureDomain' | 'desiredPowerState' | 'restartRequestedAt' | 'deletionPolicy' | 'userDataSecretRef'
>;

export type BuildResult<T> = { readonly ok: true; readonly object: T } | { readonly ok: false; readonly message: string };

/** Class hardware with the VM's overrides applied. */
export interface MachineHardware {
  readonly cpus: number;
  readonly memoryMiB: number;
  /** Class disks in class order, sizes overridden; the first is the OS disk. */
  readonly disks: readonly ClassDisk[];
}

export interface ResolvedDisk {
  readonly disk: ClassDisk;
  readonly backendId: string;
}

export interface ResolvedNic {
  readonly nic: ClassInterface;
  readonly backendId: string;
  /** Undefined means DHCP. */
  readonly ipam: Ipam | undefined;
}

export interface MachineBuildContext {
  readonly input: {
    readonly vm: VirtualMachine;
    readonly vmClass: VMClass;
    readonly image: VMImage;
    /** Secret (VM namespace) holding the rendered user-data; no user-data when unset. */
    readonly userDataSecretName?: string;
  };
  readonly apiVersion: string;
  readonly metadata: ObjectMeta;
  readonly commonSpec: CommonMachineSpec;
  readonly hardware: MachineHardware;
  /** Effective disks in class order with their resolved storage target. */
  readonly disks: readonly ResolvedDisk[];
  /** Class interfaces in class order with their resolved network target and addressing. */
  readonly nics: readonly ResolvedNic[];
  /** The image on this Provider: its per-provider resolvedRef, else the source ref of the backend. */
  readonly imageRef: string;
  readonly failureDomainName: string;
  /** Failure-domain placement facts (datacenter, cluster, node, ...). */
  readonly raw: Readonly<Record<string, string>>;
}

/**
 * The image and backend targets a machine's spec carries, as its builder wrote them from
 * `imageRef`, `disks[].backendId` and `nics[].backendId`: what a running VM keeps, whatever its
 * Provider and VMImage publish today (a VM is never rebuilt onto other targets). A list is
 * undefined when the kind names classes rather than targets (its host resolves them).
 */
export interface CarriedTargets {
  readonly imageRef?: string;
  /** One per machine disk, in class disk order. */
  readonly storage?: readonly string[];
  /** One per machine interface, in class interface order. */
  readonly networks?: readonly string[];
}

/** The one backend target shared by every disk, or a message when the class spreads them. */
export function singleStorageTarget(
  context: MachineBuildContext,
  what: string,
): { readonly ok: true; readonly backendId: string } | { readonly ok: false; readonly message: string } {
  const targets = [...new Set(context.disks.map((d) => d.backendId))];
  const [first] = targets;
  if (first === undefined) return buildFailed('the class has no disks');
  if (targets.length > 1) {
    return buildFailed(`${what} holds every disk, but the class disks resolve to ${targets.map((t) => `"${t}"`).join(', ')}`);
  }
  return { ok: true, backendId: first };
}

/** `failure domain "<fd>" has no raw <keys>`: placement facts the provider should have published. */
export function missingRaw(context: MachineBuildContext, keys: string): { readonly ok: false; readonly message: string } {
  return buildFailed(`failure domain "${context.failureDomainName}" has no raw ${keys}`);
}

export function buildFailed(message: string): { readonly ok: false; readonly message: string } {
  return { ok: false, message };
}
