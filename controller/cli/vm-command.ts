// `banlieue vm start|stop|restart NAME`: the day-2 verbs, as edits of the VirtualMachine's spec
// that the provider converges (the CLI never talks to a backend). start and stop set
// spec.desiredPowerState (stop is the backend's graceful power-off: the guest is asked to shut
// down first); restart sets spec.restartRequestedAt to now, a request the provider carries out
// once and records in status.restart (docs/adr/0032-restart-is-a-spec-timestamp.md).
import { VirtualMachineKind, type VirtualMachine } from '../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import { apiVersionOf } from '../../infra/api/kind.js';
import type { PowerState } from '../../infra/api/machine-fields.js';
import { FieldManager } from '../../infra/api/well-known.js';
import { ApiStatusError, KubeApi } from '../runtime/kube-api.js';
import { loadKubeConfig, namespaceOf } from '../runtime/kube-config.js';
import { CliError } from './cli-error.js';

export const VM_VERBS = ['start', 'stop', 'restart'] as const;
export type VmVerb = (typeof VM_VERBS)[number];

export interface VmOptions {
  readonly namespace?: string;
  readonly kubeconfig?: string;
  readonly context?: string;
}

/** The spec change a verb makes to a VirtualMachine, and what to say of it (pure). */
export type VmChange =
  { readonly patch: { readonly spec: Partial<VirtualMachine['spec']> }; readonly said: string } | { readonly patch: undefined; readonly said: string };

/** What `verb` changes on `vm` at `now`; throws CliError when it cannot apply (a restart of a VM that is to be off). */
export function decideVmChange(verb: VmVerb, vm: VirtualMachine, now: Date): VmChange {
  const who = `VirtualMachine ${vm.metadata.namespace ?? ''}/${vm.metadata.name ?? ''}`;
  const desired: PowerState = vm.spec.desiredPowerState ?? 'PoweredOn';
  const observed = vm.status?.observedPowerState ? `; it is ${vm.status.observedPowerState}` : '';
  if (verb === 'restart') {
    if (desired !== 'PoweredOn') {
      throw new CliError(
        `${who} is to be ${desired} (spec.desiredPowerState), so there is nothing to restart: start it with \`banlieue vm start ${vm.metadata.name ?? ''}\``,
      );
    }
    const requestedAt = now.toISOString();
    return {
      patch: { spec: { restartRequestedAt: requestedAt } },
      said: `${who}: restart requested (spec.restartRequestedAt ${requestedAt}): its guest is shut down, then the VM is powered on again; status.restart says how far it went`,
    };
  }
  const wanted: PowerState = verb === 'start' ? 'PoweredOn' : 'PoweredOff';
  if (desired === wanted) return { patch: undefined, said: `${who} is already to be ${wanted} (spec.desiredPowerState)${observed}: nothing changed` };
  const how =
    verb === 'start' ? 'the provider powers it on' : 'its guest is asked to shut down, and the VM is powered off once it has (or after the grace period)';
  return { patch: { spec: { desiredPowerState: wanted } }, said: `${who}: spec.desiredPowerState ${desired} → ${wanted}: ${how}` };
}

/** Runs `banlieue vm <verb> <name>`: the lines it prints. */
export async function vmCommand(verb: VmVerb, name: string, options: VmOptions, now: () => Date = () => new Date()): Promise<string[]> {
  const kc = loadKubeConfig(options.kubeconfig, options.context);
  const namespace = options.namespace ?? namespaceOf(kc);
  const api = new KubeApi(kc);
  const path = `/apis/${apiVersionOf(VirtualMachineKind)}/namespaces/${encodeURIComponent(namespace)}/${VirtualMachineKind.plural}/${encodeURIComponent(name)}`;
  const vm = await api.request<VirtualMachine>('GET', path).catch((err: unknown) => {
    throw notFound(err, name, namespace) ?? err;
  });
  const change = decideVmChange(verb, vm, now());
  if (change.patch) {
    await api.request('PATCH', path, { body: change.patch, contentType: 'application/merge-patch+json', query: { fieldManager: FieldManager.cli } });
  }
  return [change.said];
}

/** A 404 said plainly: no such VirtualMachine, or no VirtualMachine kind at all (banlieue not installed). */
function notFound(err: unknown, name: string, namespace: string): CliError | undefined {
  if (!(err instanceof ApiStatusError) || err.code !== 404) return undefined;
  const details = parseDetails(err.body);
  if (details?.kind === VirtualMachineKind.plural) return new CliError(`VirtualMachine "${name}" not found in namespace "${namespace}"`);
  return new CliError(`the API server serves no ${VirtualMachineKind.plural}.${VirtualMachineKind.group}: is banlieue installed there?`);
}

function parseDetails(body: string): { readonly kind?: string } | undefined {
  try {
    return (JSON.parse(body) as { details?: { kind?: string } }).details;
  } catch {
    return undefined;
  }
}
