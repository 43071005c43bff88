// `banlieue provider <backend>`: the Providers of one backend (discovery,
// failure domains, reachability) and its VMImage rows. Machines come next.
import { apiVersionOf } from '../../infra/api/kind.js';
import { ProviderKind, type Provider } from '../../infra/api/banlieue.io/v1alpha1/provider.js';
import { VMImageKind, type VMImage } from '../../infra/api/banlieue.io/v1alpha1/vm-image.js';
import { FieldManager } from '../../infra/api/well-known.js';
import type { Backend } from '../backends/backend.js';
import { ImageRowsReconciler } from '../reconcilers/image-rows/reconciler.js';
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

  const images = new Informer<VMImage>(api, { apiVersion: apiVersionOf(VMImageKind), kind: VMImageKind.kind, log });
  const rows = new Controller(new ImageRowsReconciler(backend, images, providers, api, ssa, options.rediscoverMs), metrics, log, { concurrency: options.concurrency });
  images.on('add', (i) => rows.enqueue(keyOf(i))).on('update', (i, old) => {
    if (old?.metadata.generation !== i.metadata.generation) rows.enqueue(keyOf(i));
  });
  // A Provider appearing, going or reaching its backend changes every image's rows.
  const recheckImages = (): void => images.list().forEach((i) => rows.enqueue(keyOf(i)));
  providers.on('add', recheckImages).on('delete', recheckImages).on('update', (p, old) => {
    const reachable = (x?: Provider): string | undefined => x?.status?.conditions?.find((c) => c.type === 'ProviderReachable')?.status;
    if (reachable(p) !== reachable(old)) recheckImages();
  });

  const running = Promise.all([providers.run(signal), images.run(signal)]);
  await Promise.all([providers.waitForSync(), images.waitForSync()]);
  log.info({ backend: backend.name }, 'Caches synced; reconciling Providers');
  await running;
  await Promise.all([controller.queue.shutDown(), rows.queue.shutDown()]);
}
