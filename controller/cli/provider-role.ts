// `banlieue provider <backend>`: the Providers of one backend (discovery,
// failure domains, reachability), its VMImage rows and its machine kind; with
// `provider`, only that Provider's, its rows and the machines placed on it
// (provider-scope.ts), under a field manager of its own; with `shard`, those of
// the Providers its selector matches and it holds the claim on (ADR 33), under the
// backend's field manager, which the shard taking a Provider over then carries on.
import { apiVersionOf } from '../../infra/api/kind.js';
import { ProviderKind, type Provider } from '../../infra/api/banlieue.io/v1alpha1/provider.js';
import { VMImageKind, type VMImage } from '../../infra/api/banlieue.io/v1alpha1/vm-image.js';
import { ConditionType, Reason } from '../../infra/api/conditions.js';
import { Finalizer, FieldManager } from '../../infra/api/well-known.js';
import type { BackendContext } from '../backends/backend.js';
import { startBackend, type BackendDescriptor, type RunningBackend } from '../backends/descriptor.js';
import { ImageRowsReconciler } from '../reconcilers/image-rows/reconciler.js';
import { InfraMachineReconciler, type InfraMachineTimings } from '../reconcilers/infra-machine/reconciler.js';
import type { InfraMachine, InfraMachineContractSpec } from '../../infra/api/infrastructure.banlieue.io/v1alpha1/infra-machine.js';
import { machineIdentity } from '../reconcilers/infra-machine/identity.js';
import { capiOwner, getOwningMachine } from '../reconcilers/owning-machine.js';
import { isOnProvider } from '../reconcilers/provider/machines-on-provider.js';
import { ProviderReconciler } from '../reconcilers/provider/reconciler.js';
import { ProviderClaims } from '../reconcilers/provider-shard/claims.js';
import { ShardClaimReconciler } from '../reconcilers/shard-claim/reconciler.js';
import { ShardWork } from '../reconcilers/shard-claim/shard-work.js';
import { systemClock } from '../runtime/clock.js';
import { findCondition, isTrue } from '../runtime/conditions.js';
import { hasFinalizer } from '../runtime/finalizers.js';
import { Controller, type Reconciler } from '../runtime/controller.js';
import { EventRecorder } from '../runtime/events.js';
import { Informer, keyOf } from '../runtime/informer.js';
import type { Logger } from '../runtime/log.js';
import type { Metrics } from '../runtime/metrics.js';
import type { RoleContext } from '../runtime/role-runner.js';
import { ServerSideApply } from '../runtime/server-side-apply.js';
import { done, type ReconcileResult } from '../runtime/errors.js';
import type { KubeApi } from '../runtime/kube-api.js';
import { runSweeps } from './orphan-sweep.js';
import { isShard, servesProvider, servingProvider, type ProviderScope, type ShardScope } from './provider-scope.js';

const BY_PROVIDER = 'providerRef';
/** By the VM UUID of spec.providerID (machineIdentity), lower case: what a backend's wake-up names. */
const BY_UUID = 'vmUuid';

export interface ProviderRoleOptions {
  readonly namespace?: string;
  /** Serve this one Provider of the namespace (a host's own, ADR 17); unset: every Provider of the backend. */
  readonly provider?: string;
  /** Serve the Providers this shard's selector matches and it claims (--provider-selector, ADR 33). */
  readonly shard?: ShardScope;
  /** The namespace of the shards' Leases, where a shard judges whether another that holds a claim still runs. */
  readonly leaseNamespace?: string;
  readonly concurrency: number;
  readonly rediscoverMs: number;
  /** A discovery not answered within this long reports the backend unreachable. @default 60 s */
  readonly discoverTimeoutMs?: number;
  readonly machineConcurrency: number;
  readonly machineTimings: InfraMachineTimings;
  readonly identity: string;
}

/** What the role's controllers share: the backend, the scope, the writers and the informers of Providers, VMImages and machines. */
interface Shared {
  readonly backend: RunningBackend<InfraMachineContractSpec>;
  readonly scope: ProviderScope;
  readonly ssa: ServerSideApply;
  readonly events: EventRecorder;
  readonly providers: Informer<Provider>;
  /** Their rows for this backend's Providers, and what a Provider publishes as images its machines may boot. */
  readonly images: Informer<VMImage>;
  readonly machines: Informer<InfraMachine>;
  readonly machineFinalizer: string;
  /** A shard's passes under way, by Provider: it lets go of one only when none is. */
  readonly work: ShardWork;
}

export async function runProviderRole(ctx: RoleContext, descriptor: BackendDescriptor, options: ProviderRoleOptions): Promise<void> {
  const { metrics, log, signal } = ctx;
  // A backend that watches its VMs wakes a machine by its VM's UUID, once the machines' controller exists.
  let wakeMachine = (_uuid: string): void => undefined;
  const backend = startBackend(descriptor, { onCall: countCalls(descriptor.api.name, metrics), wake: (uuid) => wakeMachine(uuid), log });
  if (!backend) throw new Error(`backend ${descriptor.api.name} has no provider role in this version`);
  const shared = share(ctx, backend, options);
  const { providers, images, machines } = shared;
  const providerControl = providerController(ctx, shared, options);
  const rows = imageRowsController(ctx, shared, options);
  const machineController = infraMachineController(ctx, shared, options, providerControl.enqueue);
  wakeMachine = (uuid) => machines.byIndex(BY_UUID, uuid.toLowerCase()).forEach((m) => machineController.enqueue(keyOf(m)));
  const controller = providerControl.controller;
  const claims = isShard(shared.scope) ? shardClaimController(ctx, shared, shared.scope, options) : undefined;

  const running = Promise.all([providers.run(signal), images.run(signal), machines.run(signal)]);
  await Promise.all([providers.waitForSync(), images.waitForSync(), machines.waitForSync()]);
  // Workers start once every cache they read is full: what was enqueued meanwhile runs now.
  for (const c of [controller, rows, machineController, ...(claims ? [claims] : [])]) c.start();
  machineController.startResync(() => machines.list().map(keyOf), signal);
  claims?.startResync(
    () =>
      providers
        .list()
        .filter((p) => p.spec.providerClassRef.name === backend.name)
        .map(keyOf),
    signal,
  );
  log.info({ backend: backend.name }, 'Caches synced; reconciling Providers, images and machines');
  const sweeping = runSweeps(backend, {
    exists: (key) => machines.get(key) !== undefined,
    ...(options.namespace ? { namespace: options.namespace } : {}),
    everyMs: options.rediscoverMs,
    log,
    signal,
  });
  await running;
  await sweeping;
  await Promise.all([controller.queue.shutDown(), rows.queue.shutDown(), machineController.queue.shutDown(), claims?.queue.shutDown()]);
  await backend.close();
}

function share(ctx: RoleContext, backend: RunningBackend<InfraMachineContractSpec>, options: ProviderRoleOptions): Shared {
  const { api, log } = ctx;
  const scope: ProviderScope = options.provider !== undefined ? { name: options.provider } : options.shard;
  const machineKind = backend.api.machine;
  return {
    backend,
    scope,
    ssa: new ServerSideApply(api, FieldManager.provider(backend.name, options.provider)),
    // The reporting controller is the role's kind, not its scope: it must be a qualified name (one slash); which
    // host's role reported is the instance.
    events: new EventRecorder(api, FieldManager.provider(backend.name), options.identity, log),
    providers: new Informer<Provider>(api, {
      apiVersion: apiVersionOf(ProviderKind),
      kind: ProviderKind.kind,
      log,
      ...(options.namespace ? { namespace: options.namespace } : {}),
    }),
    images: new Informer<VMImage>(api, { apiVersion: apiVersionOf(VMImageKind), kind: VMImageKind.kind, log }),
    // By the Provider they name (`ns/name`, or `ns/` when a failure domain picks it), and by the one their VM was
    // created on: a Provider's change wakes only those.
    machines: new Informer<InfraMachine>(api, {
      apiVersion: apiVersionOf(machineKind),
      kind: machineKind.kind,
      log,
      ...(options.namespace ? { namespace: options.namespace } : {}),
    })
      .addIndex(BY_PROVIDER, (m) =>
        [...new Set([m.spec.providerRef?.name ?? '', ...(m.status?.placement ? [m.status.placement.provider] : [])])].map(
          (p) => `${m.metadata.namespace ?? ''}/${p}`,
        ),
      )
      .addIndex(BY_UUID, (m) => {
        const identity = machineIdentity(backend.api.providerIDScheme, m);
        return identity.ok && !identity.unwritten ? [identity.uuid] : [];
      }),
    machineFinalizer: Finalizer.infraMachine(machineKind.kind),
    work: new ShardWork(),
  };
}

/** A shard's claims on the Providers of its backend, woken by their labels and claims changing (ADR 33). */
function shardClaimController(
  { api, metrics, log }: RoleContext,
  { backend, events, providers, work }: Shared,
  scope: ShardScope,
  options: ProviderRoleOptions,
): Controller {
  const reconciler = new ShardClaimReconciler({
    name: 'provider-shard',
    role: 'provider shard',
    scope,
    records: new ProviderClaims(providers, api),
    api,
    events,
    leaseNamespace: options.leaseNamespace ?? '',
    work,
    clock: systemClock,
  });
  const claims = new Controller(reconciler, metrics, log, { concurrency: options.concurrency, resyncMs: options.rediscoverMs, held: true });
  const claimOf = (p?: Provider): string => JSON.stringify([p?.metadata.labels, p?.metadata.annotations]);
  providers
    .on('add', (p) => {
      if (p.spec.providerClassRef.name === backend.name) claims.enqueue(keyOf(p));
    })
    .on('update', (p, old) => {
      if (p.spec.providerClassRef.name === backend.name && claimOf(p) !== claimOf(old)) claims.enqueue(keyOf(p));
    });
  return claims;
}

/** The Provider controller (discovery, failure domains, reachability), and how a Provider is enqueued to it. */
function providerController(
  { api, metrics, log }: RoleContext,
  { backend, scope, ssa, events, providers, machines, machineFinalizer, work }: Shared,
  options: ProviderRoleOptions,
): { controller: Controller; enqueue: (p: Provider, old?: Provider) => void } {
  const machinesOn = (provider: Provider): string[] => {
    const ns = provider.metadata.namespace ?? '';
    const all = providers.list(ns);
    return machines
      .list(ns)
      .filter((m) => hasFinalizer(m, machineFinalizer) && isOnProvider(m, provider, backend.name, all))
      .map(keyOf)
      .sort();
  };
  const reconciler = new ProviderReconciler(backend, providers, api, ssa, events, systemClock, options.rediscoverMs, machinesOn, options.discoverTimeoutMs);
  const controller = new Controller(isShard(scope) ? shardProviders(reconciler, scope, providers, work) : reconciler, metrics, log, {
    concurrency: options.concurrency,
    held: true,
  });
  // Only spec changes matter; our own status writes must not retrigger discovery.
  const enqueue = (p: Provider, old?: Provider): void => {
    if (p.spec.providerClassRef.name !== backend.name || !servesProvider(scope, p)) return;
    // A shard's claim coming to it is in the annotations; its selector taking the Provider, in the labels.
    const same = (x: Provider): string => JSON.stringify([x.metadata.generation, x.metadata.annotations, x.metadata.labels, x.metadata.deletionTimestamp]);
    // The controller's NoProviderRole (no role was running): this role's Ready replaces it at once.
    const toldNoRole = findCondition(p.status?.conditions, ConditionType.Ready)?.reason === Reason.NoProviderRole;
    if (old && same(old) === same(p) && !toldNoRole) return;
    controller.enqueue(keyOf(p));
  };
  providers.on('add', (p) => enqueue(p)).on('update', (p, old) => enqueue(p, old));
  rereadCapacityOnChange(machines, controller);
  return { controller, enqueue };
}

/** After a burst of machines provisioned or deleted, how soon their Providers' capacity is read again (one reading for the burst). */
const CAPACITY_REREAD_MS = 5_000;

/**
 * A machine provisioned or gone changes its Provider's room: the scheduler counts a VM against the
 * published capacity only until it is provisioned (scheduler/capacity.ts), so the Provider is read
 * again soon after, not at the next rediscovery.
 */
function rereadCapacityOnChange(machines: Informer<InfraMachine>, controller: Controller): void {
  const reread = (m: InfraMachine): void => {
    const provider = m.status?.placement?.provider ?? m.spec.providerRef?.name;
    if (provider) controller.enqueueAfter(`${m.metadata.namespace ?? ''}/${provider}`, CAPACITY_REREAD_MS);
  };
  const provisioned = (m?: InfraMachine): boolean => m?.status?.initialization?.provisioned === true;
  machines.on('update', (m, old) => (provisioned(m) !== provisioned(old) ? reread(m) : undefined)).on('delete', reread);
}

/** The controller of the backend's image rows, woken by images and by Providers. */
function imageRowsController({ api, metrics, log }: RoleContext, { backend, scope, ssa, providers, images }: Shared, options: ProviderRoleOptions): Controller {
  const rows = new Controller(
    new ImageRowsReconciler(backend, images, providers, api, ssa, options.rediscoverMs, (p) => servesProvider(scope, p)),
    metrics,
    log,
    { concurrency: options.concurrency, held: true },
  );
  images
    .on('add', (i) => rows.enqueue(keyOf(i)))
    .on('update', (i, old) => {
      if (old?.metadata.generation !== i.metadata.generation) rows.enqueue(keyOf(i));
    });
  // A Provider appearing, going or reaching its backend changes every image's rows.
  const recheckImages = (): void => images.list().forEach((i) => rows.enqueue(keyOf(i)));
  providers
    .on('add', recheckImages)
    .on('delete', recheckImages)
    .on('update', (p, old) => {
      const reachable = (x?: Provider): string | undefined => findCondition(x?.status?.conditions, ConditionType.ProviderReachable)?.status;
      if (reachable(p) !== reachable(old) || (old !== undefined && servesProvider(scope, p) !== servesProvider(scope, old))) recheckImages();
    });
  return rows;
}

/**
 * The controller of the backend's machine kind (scoped to one Provider's machines when the role
 * is), woken by its machines and by their Providers; a machine letting go wakes the Providers
 * being deleted through `enqueueProvider`.
 */
function infraMachineController(
  { api, metrics, log }: RoleContext,
  { backend, scope, ssa, events, providers, images, machines, machineFinalizer, work }: Shared,
  options: ProviderRoleOptions,
  enqueueProvider: (p: Provider) => void,
): Controller {
  const machineReconciler = new InfraMachineReconciler(backend, machines, providers, images, api, ssa, events, systemClock, options.machineTimings);
  const machineController = new Controller(
    scope === undefined ? machineReconciler : scopedMachines(machineReconciler, { scope, backend: backend.name, machines, providers, api, work }),
    metrics,
    log,
    { concurrency: options.machineConcurrency, resyncMs: options.machineTimings.resyncMs, held: true },
  );
  // Our own status writes change neither generation nor metadata we read: they do not retrigger. Our finalizer
  // does: the pass that added it returns and the next one starts on this event. Such a change of the machine
  // itself runs it even while it backs off (it may be the fix); other events leave it to its backoff.
  machines
    .on('add', (m) => machineController.enqueue(keyOf(m), { new: true }))
    .on('update', (m, old) => {
      const changed = (x?: InfraMachine): string =>
        JSON.stringify([x?.metadata.generation, x?.metadata.deletionTimestamp, x?.metadata.annotations, x?.metadata.ownerReferences, x?.metadata.finalizers]);
      if (changed(m) !== changed(old)) machineController.enqueue(keyOf(m), { changed: true });
    });
  // A machine letting go (its finalizer gone, or the machine) may free a Provider being deleted.
  const freeProviders = (m: InfraMachine): void => {
    for (const p of providers.list(m.metadata.namespace ?? '')) if (p.metadata.deletionTimestamp !== undefined) enqueueProvider(p);
  };
  machines.on('delete', freeProviders).on('update', (m, old) => {
    if (hasFinalizer(m, machineFinalizer) !== (old !== undefined && hasFinalizer(old, machineFinalizer))) freeProviders(m);
  });
  // A Provider's failure domains or reachability changing may unblock its namespace's waiting machines; a shard
  // taking a Provider over picks up every machine on it, as a restart would (one letting go drops them on their next pass).
  providers.on('update', (p, old) => {
    const takenOver = old !== undefined && servesProvider(scope, p) && !servesProvider(scope, old);
    if (!takenOver && statusMachinesRead(p) === statusMachinesRead(old)) return;
    const ns = p.metadata.namespace ?? '';
    for (const m of [...machines.byIndex(BY_PROVIDER, `${ns}/${p.metadata.name ?? ''}`), ...machines.byIndex(BY_PROVIDER, `${ns}/`)]) {
      if (takenOver || !isTrue(m.status?.conditions, ConditionType.Ready)) machineController.enqueue(keyOf(m));
    }
  });
  return machineController;
}

/**
 * What of a Provider's status a machine's pass reads: all of it but the failure domains' capacity,
 * which only the scheduler weighs. Capacity changes as machines are created (each provisioned one has
 * it read again): it must not send every waiting machine of the Provider through another pass.
 */
function statusMachinesRead(p: Provider | undefined): string {
  const failureDomains = p?.status?.failureDomains?.map((fd) => ({ ...fd, capacity: undefined }));
  return JSON.stringify({ ...p?.status, failureDomains });
}

/** A backend's calls, counted in the role's metrics. */
function countCalls(backend: string, metrics: Metrics): NonNullable<BackendContext['onCall']> {
  return (method, outcome, seconds) => {
    metrics.backendCalls.inc({ backend, method, outcome });
    metrics.backendCallDuration.observe({ backend, method }, seconds);
  };
}

/**
 * The machine reconciler of a scoped role: a machine placed on another Provider (or one
 * another shard holds) is left to that Provider's role, decided on every pass (placements
 * move with the Providers' failure domains, Providers between shards). A CAPI-owned machine
 * without spec.providerRef is placed by its Machine's failure domain, read as the reconciler
 * reads it. A shard's pass counts against its Provider until it ends (ShardWork).
 */
function scopedMachines(
  inner: Reconciler,
  on: {
    readonly scope: Exclude<ProviderScope, undefined>;
    readonly backend: string;
    readonly machines: Informer<InfraMachine>;
    readonly providers: Informer<Provider>;
    readonly api: KubeApi;
    readonly work: ShardWork;
  },
): Reconciler {
  return {
    name: inner.name,
    kind: inner.kind,
    reconcile: async (key: string, log: Logger, signal: AbortSignal): Promise<ReconcileResult> => {
      const machine = on.machines.get(key);
      if (!machine) return inner.reconcile(key, log, signal);
      const byMachine =
        machine.spec.providerRef === undefined && capiOwner(machine) ? (await getOwningMachine(on.api, machine))?.spec?.failureDomain : undefined;
      // Judged from the cache after the await: the claim read here is the one the shard's claim controller reads.
      const ns = machine.metadata.namespace ?? '';
      const provider = servingProvider(on.scope, on.backend, machine, on.providers.list(ns), byMachine);
      if (provider === undefined) return done;
      return on.work.run(`${ns}/${provider}`, () => inner.reconcile(key, log, signal));
    },
  };
}

/** The Provider reconciler of a shard: a Provider it no longer holds is left alone from its next pass; a pass counts against it until it ends. */
function shardProviders(inner: Reconciler, scope: ShardScope, providers: Informer<Provider>, work: ShardWork): Reconciler {
  return {
    name: inner.name,
    kind: inner.kind,
    reconcile: async (key: string, log: Logger, signal: AbortSignal): Promise<ReconcileResult> => {
      const provider = providers.get(key);
      if (provider && !servesProvider(scope, provider)) return done;
      return work.run(key, () => inner.reconcile(key, log, signal));
    },
  };
}
