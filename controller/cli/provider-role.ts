// `banlieue provider <backend>`: the Providers of one backend (discovery,
// failure domains, reachability). Machines and image rows come next.
import { apiVersionOf } from '../../infra/api/kind.js';
import { ProviderKind, type Provider } from '../../infra/api/banlieue.io/v1alpha1/provider.js';
import { FieldManager } from '../../infra/api/well-known.js';
import type { Backend } from '../backends/backend.js';
import { ProviderReconciler } from '../reconcilers/provider/reconciler.js';
import { systemClock } from '../runtime/clock.js';
import { Controller } from '../runtime/controller.js';
import { EventRecorder } from '../runtime/events.js';
import { Informer, keyOf } from '../runtime/informer.js';
import type { RoleContext } from '../runtime/role-runner.js';
import { ServerSideApply } from '../runtime/server-side-apply.js';

export interface ProviderRoleOptions {
  readonly namespace?: string;
  readonly concurrency: number;
  readonly rediscoverMs: number;
  readonly identity: string;
}

export async function runProviderRole(ctx: RoleContext, backend: Backend, options: ProviderRoleOptions): Promise<void> {
  const { api, metrics, log, signal } = ctx;
  const manager = FieldManager.provider(backend.name);
  const providers = new Informer<Provider>(api, { apiVersion: apiVersionOf(ProviderKind), kind: ProviderKind.kind, log, ...(options.namespace ? { namespace: options.namespace } : {}) });
  const ssa = new ServerSideApply(api, manager);
  const events = new EventRecorder(api, manager, options.identity, log);
  const controller = new Controller(
    new ProviderReconciler(backend, providers, api, ssa, events, systemClock, options.rediscoverMs),
    metrics,
    log,
    { concurrency: options.concurrency },
  );
  // Only spec changes matter; our own status writes must not retrigger discovery.
  const enqueue = (p: Provider, old?: Provider): void => {
    if (p.spec.providerClassRef.name !== backend.name) return;
    if (old && old.metadata.generation === p.metadata.generation && JSON.stringify(old.metadata.annotations) === JSON.stringify(p.metadata.annotations)) return;
    controller.enqueue(keyOf(p));
  };
  providers.on('add', (p) => enqueue(p)).on('update', (p, old) => enqueue(p, old));
  const running = providers.run(signal);
  await providers.waitForSync();
  log.info({ backend: backend.name }, 'Caches synced; reconciling Providers');
  await running;
  await controller.queue.shutDown();
}
