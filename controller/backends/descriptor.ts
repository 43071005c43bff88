// A backend, as the rest of banlieue sees it: one descriptor exported by its
// folder (docs/adr/0014-backend-descriptors.md). The controller builds machine
// objects with `buildMachine`; a provider role runs `createBackend`. Generic
// code reads descriptors from a catalog and never names a backend.
import type { BackendApi } from '../../infra/api/backends.js';
import type { InfraMachine, InfraMachineContractSpec, NodeArchitecture } from '../../infra/api/infrastructure.banlieue.io/v1alpha1/infra-machine.js';
import type { Backend, BackendContext } from './backend.js';
import type { BuildResult, CarriedTargets, MachineBuildContext } from './machine-build.js';
import type { NamedTarget } from './named-targets.js';

/** What one machine of a spec offers the Node it becomes (a *MachineTemplate's status, for autoscaling from zero). */
export interface MachineCapacity {
  readonly cpus: number;
  readonly memoryMiB: number;
  readonly architecture: NodeArchitecture;
}

export interface BackendDescriptor<Spec extends InfraMachineContractSpec = InfraMachineContractSpec> {
  /** What the API knows of it: name, kinds, providerID scheme, endpoint schemes, credentials, flavor (infra/api/backend-api.ts). */
  readonly api: BackendApi;
  /** The machine object of a placed VirtualMachine (pure); a message for InfraBuildFailed otherwise. */
  buildMachine(context: MachineBuildContext): BuildResult<InfraMachine<Spec>>;
  /** The image and targets `buildMachine` wrote into `spec`, read back (pure; the inverse of the builder for those). */
  carriedTargets(spec: Spec): CarriedTargets;
  /** The backend objects the spec names by name (pure): held to what the machine's Provider publishes before any backend call. */
  namedTargets(spec: Spec): readonly NamedTarget[];
  /** The CPUs, memory and architecture a machine of this spec gets (pure; read off a template's spec.template.spec). */
  machineCapacity(spec: Spec): MachineCapacity;
  /** The provider role's backend; absent while this version has no provider role for it. */
  readonly createBackend?: (context: BackendContext) => Backend<Spec>;
}

/** The descriptors one process knows: the registry's in the binary, more in tests. */
export class BackendCatalog {
  private readonly byName: ReadonlyMap<string, BackendDescriptor>;

  constructor(readonly all: readonly BackendDescriptor[]) {
    this.byName = new Map(all.map((d) => [d.api.name, d]));
    if (this.byName.size !== all.length) throw new Error(`backend names repeat: ${all.map((d) => d.api.name).join(', ')}`);
  }

  get(name: string): BackendDescriptor | undefined {
    return this.byName.get(name);
  }

  /** The machine kind a Provider class is served by, e.g. VSphereMachine for vsphere. */
  machineKind(name: string): string | undefined {
    return this.byName.get(name)?.api.machine.kind;
  }

  /** Names of the backends whose provider role this process can run. */
  withProviderRole(): string[] {
    return this.all.filter((d) => d.createBackend).map((d) => d.api.name);
  }
}

/** A provider role's backend instance with the descriptor facts its reconcilers read. */
export interface RunningBackend<Spec = unknown> extends Backend<Spec> {
  readonly name: string;
  /** Keys the credentials Secret must hold (the API entry's `credentials.keys`). */
  readonly credentialKeys: readonly string[];
  readonly api: BackendApi;
  /** The descriptor's `namedTargets`. */
  namedTargets(spec: Spec): readonly NamedTarget[];
}

/** The backend of one provider role, or undefined when this version has no provider role for it. */
export function startBackend<Spec extends InfraMachineContractSpec>(
  descriptor: BackendDescriptor<Spec>,
  context: BackendContext,
): RunningBackend<Spec> | undefined {
  const backend = descriptor.createBackend?.(context);
  return (
    backend && {
      ...backend,
      name: descriptor.api.name,
      credentialKeys: descriptor.api.credentials.keys,
      api: descriptor.api,
      namedTargets: (spec) => descriptor.namedTargets(spec),
    }
  );
}
