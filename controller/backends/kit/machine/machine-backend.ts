// A backend's machine kind made of its steps: each call runs with the pass's signal
// (cancellation.ts) and the client of the Provider's connection, then the one recipe.
import type { Connection, DestroyOptions, EnsureOptions, MachineBackend, MachineRequest } from '../../backend.js';
import { withSignal } from '../../cancellation.js';
import { converge, type PoweredSpec } from './converge.js';
import { destroyMachineVm, releaseMachineVm } from './let-go.js';
import type { MachineSteps, Observed } from './steps.js';

/** Runs `work` with the client of `connection` (a SessionPool's `use`, or the one host a role runs on). */
export type UseClient<Client> = <T>(connection: Connection, work: (client: Client) => Promise<T>) => Promise<T>;

/** The machine kind whose passes are `stepsFor(client)` run by the recipe; `stepsFor` is called once per pass. */
export function machineBackend<Spec extends PoweredSpec, Client, Vm, Seen extends Observed>(
  use: UseClient<Client>,
  stepsFor: (client: Client) => MachineSteps<Spec, Vm, Seen>,
): MachineBackend<Spec> {
  return {
    ensure: (connection: Connection, request: MachineRequest<Spec>, options: EnsureOptions) =>
      withSignal(options.signal, () => use(connection, (client) => converge(stepsFor(client), request, options))),
    destroy: (connection: Connection, request: MachineRequest<Spec>, options: DestroyOptions) =>
      withSignal(options.signal, () => use(connection, (client) => destroyMachineVm(stepsFor(client), request, options))),
    release: (connection: Connection, request: MachineRequest<Spec>, options: DestroyOptions) =>
      withSignal(options.signal, () => use(connection, (client) => releaseMachineVm(stepsFor(client), request, options))),
  };
}
