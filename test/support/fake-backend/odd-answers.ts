// The fake backend with answers a real backend can give and a pass must
// survive, chosen by object name so one provider role's reconcilers meet
// them beside ordinary objects:
// - a Provider named `huge` discovers more failure domains than a Provider's
//   status holds (a large Proxmox cluster): the API server refuses that status;
// - a machine named `long-task` is being created by a task whose reference is
//   longer than status.taskRef takes: the API server refuses that status too;
// - a machine named `flaky` meets a connection reset on every call: creating,
//   destroying or releasing its VM.
import type { BackendDescriptor } from '../../../controller/backends/descriptor.js';
import type { FailureDomainStatus } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { FakeMachineSpec } from './fake-machine.js';

export const HUGE_PROVIDER = 'huge';
export const LONG_TASK_MACHINE = 'long-task';
export const FLAKY_MACHINE = 'flaky';

/** One more than a Provider's status.failureDomains takes. */
const TOO_MANY_FAILURE_DOMAINS = 257;

function manyFailureDomains(): FailureDomainStatus[] {
  return Array.from({ length: TOO_MANY_FAILURE_DOMAINS }, (_, i) => ({
    name: `zone-${i}`,
    labels: { name: `zone-${i}` },
    attributes: { availableStorageClasses: [], availableNetworkClasses: [], raw: { zone: `zone-${i}` } },
  }));
}

export function withOddAnswers(descriptor: BackendDescriptor<FakeMachineSpec>): BackendDescriptor<FakeMachineSpec> {
  const create = descriptor.createBackend;
  if (!create) throw new Error(`backend ${descriptor.api.name} has no provider role`);
  return {
    ...descriptor,
    createBackend: (context) => {
      const backend = create(context);
      const reset = (): Promise<never> => Promise.reject(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }));
      return {
        ...backend,
        discover: (provider, connection, signal) =>
          provider.metadata.name === HUGE_PROVIDER ? Promise.resolve({ failureDomains: manyFailureDomains() }) : backend.discover(provider, connection, signal),
        machines: {
          ...backend.machines,
          ensure: (connection, request, options) => {
            if (request.name === LONG_TASK_MACHINE) {
              const taskRef = `task-${'0'.repeat(300)}`;
              return Promise.resolve({ state: 'InProgress', taskRef, message: `creating (task ${taskRef})`, actions: [] });
            }
            return request.name === FLAKY_MACHINE ? reset() : backend.machines.ensure(connection, request, options);
          },
          destroy: (connection, request, options) => (request.name === FLAKY_MACHINE ? reset() : backend.machines.destroy(connection, request, options)),
          release: (connection, request, options) => (request.name === FLAKY_MACHINE ? reset() : backend.machines.release(connection, request, options)),
        },
      };
    },
  };
}
