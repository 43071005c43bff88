// What a fault run needs of one backend, and nothing more: its peer started
// with slow clones, the objects a user writes to run VMs on it, the provider
// role's command line, the backend's VMs as the run sees them, a way to freeze
// the peer, and — where the peer has no guest of its own — the guest's side.
// The run itself (test/faults/fault-run.ts) names no backend.
import type { Obj } from '../support/fixtures.js';
import type { Teardown } from '../bench/teardown.js';
import type { BackendVm } from './fleet-check.js';

export interface FaultWorld {
  /** For the table: `vsphere on vcsim`. */
  readonly title: string;
  /** For the table and the log: `vcsim`. */
  readonly peer: string;
  /** The backend's machine kind (`VSphereMachine`). */
  readonly machineKind: string;
  /** The provider role's Lease (`banlieue-provider-<backend>`). */
  readonly providerLease: string;
  /** The Provider the run watches for ProviderReachable. */
  readonly provider: Obj;
  /** Everything the user applies before creating VMs: Secret, Provider, VMClass, VMImage. */
  readonly objects: readonly Obj[];
  readonly vmClassName: string;
  readonly vmImageName: string;
  /** The VMs' spec.placement, where the peer limits where their image clones. @default none */
  readonly placement?: Readonly<Record<string, unknown>>;
  /** How long each clone task runs in the peer. */
  readonly cloneMs: number;
  /** `provider <backend> …` without the kubeconfig, namespace and election flags. */
  readonly providerArgs: readonly string[];
  /** Added to the provider role's environment (a host agent's config, as its unit sets it). */
  readonly providerEnv?: Readonly<Record<string, string>>;
  /** The UUID a machine's spec.providerID names, lower case. */
  uuidOf(providerID: string): string;
  /** The run's VMs in the backend (not templates). */
  backendVms(): Promise<BackendVm[]>;
  /**
   * Where a frozen peer shows: `provider` — the Provider reads ProviderReachable=False (the peer is its
   * one endpoint); `machines` — the Provider stays reachable and the machines whose VMs the peer holds
   * read Ready=False ConnectFailed (a host agent whose VMMs hang: the host itself answers).
   * @default 'provider'
   */
  readonly outageShownOn?: 'provider' | 'machines';
  /** Freezes the peer (it answers nothing) until resume(). */
  freeze(): void;
  resume(): void;
  /** What the peer itself saw go wrong (calls off its API schema), checked at the end of the run. */
  peerProblems?(): readonly string[];
  /** Plays the guest side for these machines (e.g. VMware Tools reporting an IP), when the peer does not. */
  playGuest?(machines: readonly Obj[]): Promise<void>;
}

export interface FaultWorldProps {
  readonly namespace: string;
  /** Every VirtualMachine of the run is named `<prefix>NN`. */
  readonly prefix: string;
  readonly names: readonly string[];
  readonly say: (message: string) => void;
}

/** Starts a backend's peer (its stop deferred to `teardown`) and answers its world. */
export type StartFaultWorld = (teardown: Teardown, props: FaultWorldProps) => Promise<FaultWorld>;
