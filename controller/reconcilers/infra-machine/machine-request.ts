// What a pass asks the backend for (pure): where the machine is, whether it now names
// another place than its record, and the request the backend gets. The reconciler
// reads the caches, the connection, the claims and the user-data; these steps only
// put what it read together.
import { camelCase } from '../../../infra/api/backend-api.js';
import type { Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { InfraMachine, MachinePlacementRecord } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/infra-machine.js';
import type { MachineRequest } from '../../backends/backend.js';
import { describePlacementChange, resolveMachinePlacement, resolveRecordedPlacement, type MachinePlacement } from './placement.js';

/** A placement that was found. */
export type FoundPlacement = Extract<MachinePlacement, { ok: true }>;

/**
 * Where the machine is: once recorded (status.placement), the place the VM was created in, never
 * where the spec points now; else where spec.providerRef and the failure domain put it.
 * @param machineFailureDomain the owning CAPI Machine's failure domain; it wins over spec.failureDomain.
 */
export function decideMachinePlacement(
  backend: string,
  machine: InfraMachine,
  providers: readonly Provider[],
  machineFailureDomain: string | undefined,
): MachinePlacement {
  const namespace = machine.metadata.namespace ?? '';
  const record = machine.status?.placement;
  if (record) return resolveRecordedPlacement(backend, namespace, record, providers);
  return resolveMachinePlacement({
    backend,
    namespace,
    ...(machine.spec.providerRef ? { providerName: machine.spec.providerRef.name } : {}),
    ...(machine.spec.failureDomain ? { failureDomain: machine.spec.failureDomain } : {}),
    ...(machineFailureDomain ? { machineFailureDomain } : {}),
    providers,
  });
}

/** The place the machine names now against its record, in words; undefined when nothing is recorded or it names nothing else. */
export function decidePlacementChange(machine: InfraMachine, machineFailureDomain: string | undefined): string | undefined {
  const record = machine.status?.placement;
  if (!record) return undefined;
  const namedDomain = machineFailureDomain ?? machine.spec.failureDomain;
  return describePlacementChange(record, {
    ...(machine.spec.providerRef ? { providerName: machine.spec.providerRef.name } : {}),
    ...(namedDomain !== undefined ? { failureDomain: namedDomain } : {}),
  });
}

/** The failure domain's backend placement facts (its attributes.raw). */
export function placementFacts(placement: FoundPlacement): Readonly<Record<string, string>> {
  return placement.failureDomain.attributes?.raw ?? {};
}

/** The Provider's settings block of its backend (spec.<camelCase backend name>), when it has one. */
function settingsOf(provider: Provider): { providerSettings?: Readonly<Record<string, unknown>> } {
  const block = (provider.spec as Readonly<Record<string, unknown>>)[camelCase(provider.spec.providerClassRef.name)];
  return typeof block === 'object' && block !== null ? { providerSettings: block as Readonly<Record<string, unknown>> } : {};
}

/** What status.placement records: the record itself once there is one, else the place just found. */
export function toPlacementRecord(machine: InfraMachine, placement: FoundPlacement): MachinePlacementRecord {
  return (
    machine.status?.placement ?? {
      provider: placement.provider.metadata.name ?? '',
      failureDomain: placement.failureDomain.name,
      location: { ...placementFacts(placement) },
    }
  );
}

/** What the backend is asked about: the machine's VM by identity, its spec with claimed addresses, and where it is. */
export interface RequestInput {
  readonly identity: { readonly uuid: string; readonly providerID: string };
  /** The machine's spec with the addresses its IPAM claims are bound to. */
  readonly spec: InfraMachine['spec'];
  readonly placement: FoundPlacement;
  readonly userData: Buffer | undefined;
}

export function toMachineRequest(machine: InfraMachine, input: RequestInput): MachineRequest<unknown> {
  const namespace = machine.metadata.namespace ?? '';
  return {
    name: machine.metadata.name ?? '',
    namespace,
    uuid: input.identity.uuid,
    providerID: input.identity.providerID,
    owner: { kind: machine.kind, namespace, name: machine.metadata.name ?? '' },
    spec: input.spec,
    raw: placementFacts(input.placement),
    ...settingsOf(input.placement.provider),
    userData: input.userData,
    ...(machine.status?.taskRef ? { taskRef: machine.status.taskRef } : {}),
  };
}
