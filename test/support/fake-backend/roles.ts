// Both roles in the test's own process, with the fake backend registered
// beside the built-in ones (as only tests do): the controller and the fake
// backend's provider role against one control plane, until the returned
// function stops them.
import { setMaxListeners } from 'node:events';
import { BackendCatalog, type BackendDescriptor } from '../../../controller/backends/descriptor.js';
import { BUILT_IN_BACKENDS } from '../../../controller/backends/registry.js';
import { runControllerRole } from '../../../controller/cli/controller-role.js';
import { runProviderRole } from '../../../controller/cli/provider-role.js';
import { KubeApi } from '../../../controller/runtime/kube-api.js';
import { loadKubeConfig } from '../../../controller/runtime/kube-config.js';
import { silentLogger } from '../../../controller/runtime/log.js';
import { Metrics } from '../../../controller/runtime/metrics.js';
import type { RoleContext } from '../../../controller/runtime/role-runner.js';

export interface FakeRolesOptions {
  /** Run the controller role too (false: the provider role alone). @default true */
  readonly controller?: boolean;
  /** The controller's workers. @default 2 */
  readonly concurrency?: number;
  /** The provider role's machine workers. @default 4 */
  readonly machineConcurrency?: number;
  /** How often a remembered create task is looked at. @default 500 ms */
  readonly taskPollMs?: number;
}

/** Starts the roles; resolves the returned stop() once both have ended. */
export function runFakeRoles(kubeconfigPath: string, fake: BackendDescriptor, options: FakeRolesOptions = {}): () => Promise<void> {
  const stop = new AbortController();
  // Every informer of both roles listens on it, as on a role's shutdown signal.
  setMaxListeners(0, stop.signal);
  const context = (): RoleContext => ({ api: new KubeApi(loadKubeConfig(kubeconfigPath)), metrics: new Metrics(), log: silentLogger(), signal: stop.signal });
  const roles = Promise.all([
    options.controller === false
      ? undefined
      : runControllerRole(context(), {
          backends: new BackendCatalog([...BUILT_IN_BACKENDS.all, fake]),
          concurrency: options.concurrency ?? 2,
          resyncMs: 60_000,
          identity: 'test-controller',
          // No provider role leads on a Lease here: the fake role runs without one.
          leaseNamespace: 'banlieue-system',
        }),
    runProviderRole(context(), fake, {
      concurrency: 2,
      rediscoverMs: 60_000,
      machineConcurrency: options.machineConcurrency ?? 4,
      machineTimings: { pollMs: 1_000, resyncMs: 60_000, taskPollMs: options.taskPollMs ?? 500 },
      identity: 'test-provider-fake',
    }),
  ]);
  return async () => {
    stop.abort();
    await roles;
  };
}
