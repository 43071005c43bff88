// `banlieue controller`: the VirtualMachine scheduler, the InfraCluster
// aggregation and VMImage readiness. Talks only to the Kubernetes API.
import { apiVersionOf, type KindDefinition } from '../../infra/api/kind.js';
import { ProviderKind, type Provider } from '../../infra/api/banlieue.io/v1alpha1/provider.js';
import { VirtualMachineKind, type VirtualMachine } from '../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import { VMClassKind, type VMClass } from '../../infra/api/banlieue.io/v1alpha1/vm-class.js';
import { VMImageKind, type VMImage } from '../../infra/api/banlieue.io/v1alpha1/vm-image.js';
import type { InfraCluster } from '../../infra/api/infrastructure.banlieue.io/v1alpha1/infra-cluster.js';
import { FieldManager } from '../../infra/api/well-known.js';
import type { BackendCatalog } from '../backends/descriptor.js';
import { CapiMachinePlacementReconciler } from '../reconcilers/capi-machine-placement/reconciler.js';
import { HostReadsReconciler } from '../reconcilers/host-reads/reconciler.js';
import { InfraClusterReconciler } from '../reconcilers/infra-cluster/reconciler.js';
import { ProviderRoleReconciler } from '../reconcilers/provider-role/reconciler.js';
import { MachineTemplateReconciler, type MachineTemplate } from '../reconcilers/machine-template/reconciler.js';
import { neighboursToRecheck, WAITING_ON_NEIGHBOURS, waitingOnNeighbours } from '../reconcilers/virtual-machine/neighbours.js';
import { MIRROR_COALESCE_MS, mirrorsAtOnce } from '../reconcilers/virtual-machine/status-mirror.js';
import { VirtualMachineReconciler } from '../reconcilers/virtual-machine/reconciler.js';
import type { InfraMachine } from '../../infra/api/infrastructure.banlieue.io/v1alpha1/infra-machine.js';
import { VMImageReconciler } from '../reconcilers/vm-image/reconciler.js';
import { systemClock } from '../runtime/clock.js';
import { Controller, type ControllerOptions, type Reconciler } from '../runtime/controller.js';
import { EventRecorder } from '../runtime/events.js';
import { Informer, keyOf, type KubeObject } from '../runtime/informer.js';
import type { Lease } from '../runtime/leader-election.js';
import type { RoleContext } from '../runtime/role-runner.js';
import { sleep } from '../runtime/backoff.js';
import type { ShardScope } from '../reconcilers/shard-claim/decide.js';
import { NamespaceShard } from './namespace-shard.js';
import { ServerSideApply } from '../runtime/server-side-apply.js';

export interface ControllerRoleOptions {
  /** The backends whose machine and cluster kinds this controller serves. */
  readonly backends: BackendCatalog;
  /** Watch one namespace; all when unset. */
  readonly namespace?: string;
  /**
   * Serve only the namespaces whose labels this shard's selector matches and whose claim it holds:
   * one shard of several controllers (--namespace-selector, ADR 33), claiming under its Lease name.
   * Cluster-scoped objects (VMImage readiness) every shard serves.
   */
  readonly namespaceShard?: ShardScope;
  readonly concurrency: number;
  readonly resyncMs: number;
  /** VirtualMachines of one namespace recreated per minute at most. @default 5 */
  readonly recreatesPerMinute?: number;
  readonly identity: string;
  /**
   * The namespace of the provider roles' Leases (the controller's own): a Provider's class without a live one there has no role running.
   * A controller shard keeps its claims on namespaces there too.
   */
  readonly leaseNamespace: string;
}

const BY_CLASS = 'classRef';
const BY_IMAGE = 'imageRef';

/** Keep informer events flowing into controllers: every change enqueues the keys it affects. */
function onAnyChange<T extends KubeObject>(informer: Informer<T>, keys: (obj: T) => string[], enqueue: (key: string) => void): void {
  const handler = (obj: T): void => keys(obj).forEach(enqueue);
  informer.on('add', handler).on('update', handler).on('delete', handler);
}

/** Every change of an object enqueues its own key in `controller`. */
function onOwnChange<T extends KubeObject>(informer: Informer<T>, controller: Controller): void {
  onAnyChange(
    informer,
    (obj) => [keyOf(obj)],
    (k) => controller.enqueue(k),
  );
}

/** The informers of the role: the banlieue.io kinds, and each backend's machine, cluster and template kind by kind name. */
interface Watched {
  readonly vms: Informer<VirtualMachine>;
  readonly providers: Informer<Provider>;
  readonly classes: Informer<VMClass>;
  readonly images: Informer<VMImage>;
  readonly machines: Map<string, Informer<InfraMachine>>;
  readonly clusters: Map<string, Informer<InfraCluster>>;
  readonly templates: Map<string, Informer<MachineTemplate>>;
  /** A controller shard's: the Namespaces, for their labels. */
  readonly namespaces?: Informer<KubeObject>;
  /** The Leases of the controller's namespace: the provider roles' (NoProviderRole), and a controller shard's claims on namespaces. */
  readonly leases: Informer<Lease>;
}

/** The role's controllers; a cluster and a template controller each with the informer of its kind. */
interface Controllers {
  readonly vm: Controller;
  readonly image: Controller;
  readonly clusters: readonly (readonly [Informer<InfraCluster>, Controller])[];
  readonly templates: readonly (readonly [Informer<MachineTemplate>, Controller])[];
  readonly placements: readonly Controller[];
  /** Providers told NoProviderRole while no role of their class runs. */
  readonly providerRole: Controller;
  /** Per backend whose provider runs on its hosts: the keys to resync (one per namespace with machines) and its controller. */
  readonly hostReads: readonly (readonly [() => string[], Controller])[];
  /** A controller shard's claims on namespaces. */
  readonly shard?: NamespaceShard;
}

type Syncing = Pick<Informer<KubeObject>, 'run' | 'waitForSync'>;

export async function runControllerRole(ctx: RoleContext, options: ControllerRoleOptions): Promise<void> {
  const { metrics, log, signal } = ctx;
  const watched = watchKinds(ctx, options);
  const { vms, providers, classes, images, machines, clusters, templates, leases } = watched;
  const core: Syncing[] = [vms, providers, classes, images, leases, ...clusters.values()];
  if (watched.namespaces) core.push(watched.namespaces);
  const optional: Syncing[] = [...machines.values(), ...templates.values()];
  const all = [...core, ...optional];

  const built = buildControllers(ctx, options, watched);
  routeEvents(watched, built);
  built.shard?.route((ns) => runNamespace(watched, built, ns));

  const running = all.map((inf) => inf.run(signal));
  await Promise.all(core.map((inf) => inf.waitForSync()));
  // A machine or template kind that cannot be listed (RBAC, a missing CRD) must not stop
  // everything: its VMs see it as Unknown and wait; the others go on.
  await Promise.race([Promise.all(optional.map((inf) => inf.waitForSync())), sleep(10_000, signal)]);
  log.info({ informers: all.length }, 'Caches synced; reconciling');
  const controllers = startControllers(watched, built, signal);
  reportPhases(vms, metrics, signal);

  await Promise.all(running);
  await Promise.all(controllers.map((c) => c.queue.shutDown()));
}

/** An informer per kind the role reads, each of one namespace when the role watches one and the kind is namespaced. */
function watchKinds(ctx: RoleContext, options: ControllerRoleOptions): Watched {
  const { api, log } = ctx;
  const ns = options.namespace;
  const informer = <T extends KubeObject>(def: KindDefinition): Informer<T> =>
    new Informer<T>(api, { apiVersion: apiVersionOf(def), kind: def.kind, log, ...(ns && def.scope === 'Namespaced' ? { namespace: ns } : {}) });
  const backends = options.backends.all;
  return {
    // Class, image and neighbour events find their VMs by index, not by scanning every VM.
    vms: informer<VirtualMachine>(VirtualMachineKind)
      .addIndex(BY_CLASS, (vm) => [vm.spec.classRef.name])
      .addIndex(BY_IMAGE, (vm) => [vm.spec.imageRef.name])
      .addIndex(WAITING_ON_NEIGHBOURS, waitingOnNeighbours),
    providers: informer<Provider>(ProviderKind),
    classes: informer<VMClass>(VMClassKind),
    images: informer<VMImage>(VMImageKind),
    machines: new Map(backends.map((b) => [b.api.machine.kind, informer<InfraMachine>(b.api.machine)] as const)),
    clusters: new Map(backends.map((b) => [b.api.cluster.kind, informer<InfraCluster>(b.api.cluster)] as const)),
    templates: new Map(backends.map((b) => [b.api.machineTemplate.kind, informer<MachineTemplate>(b.api.machineTemplate)] as const)),
    ...(options.namespaceShard ? { namespaces: new Informer<KubeObject>(api, { apiVersion: 'v1', kind: 'Namespace', log }) } : {}),
    leases: new Informer<Lease>(api, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', log, namespace: options.leaseNamespace }),
  };
}

/**
 * A controller per reconciler, held until the caches have synced. The template and placement
 * controllers listen to their own informers here; the others are wired by routeEvents.
 */
function buildControllers(ctx: RoleContext, options: ControllerRoleOptions, watched: Watched): Controllers {
  const { api, metrics, log } = ctx;
  const { vms, providers, classes, images, machines, clusters, templates } = watched;
  const backends = options.backends.all;
  const ssa = new ServerSideApply(api, FieldManager.controller);
  const events = new EventRecorder(api, FieldManager.controller, options.identity, log);
  const controllerOptions: ControllerOptions = { concurrency: options.concurrency, resyncMs: options.resyncMs, held: true };
  const shard = namespaceShard(ctx, options, watched, events, controllerOptions);
  const controllerOf = (reconciler: Reconciler): Controller => new Controller(shard ? shard.scoped(reconciler) : reconciler, metrics, log, controllerOptions);

  const vm = controllerOf(
    new VirtualMachineReconciler({
      api,
      ssa,
      events,
      clock: systemClock,
      metrics,
      backends: options.backends,
      vms,
      providers,
      classes,
      images,
      machines,
      ...(options.recreatesPerMinute !== undefined ? { recreatesPerMinute: options.recreatesPerMinute } : {}),
    }),
  );
  const image = controllerOf(new VMImageReconciler(images, ssa, systemClock));
  const clusterControllers = backends.map((backend) => {
    const kind = backend.api.cluster.kind;
    const inf = clusters.get(kind) as Informer<InfraCluster>;
    return [inf, controllerOf(new InfraClusterReconciler(kind, backend.api.name, inf, providers, api, ssa, systemClock))] as const;
  });

  // Each template's status says what a machine of it offers a Node (autoscaling from zero).
  const templateControllers = backends.map((backend) => {
    const inf = templates.get(backend.api.machineTemplate.kind) as Informer<MachineTemplate>;
    const controller = controllerOf(new MachineTemplateReconciler(backend, inf, ssa));
    onOwnChange(inf, controller);
    return [inf, controller] as const;
  });

  const placements = backends.map((backend) => {
    const machineKind = backend.api.machine.kind;
    const machineInformer = machines.get(machineKind) as Informer<InfraMachine>;
    const clusterInformer = clusters.get(backend.api.cluster.kind) as Informer<InfraCluster>;
    return placementController(
      controllerOf(new CapiMachinePlacementReconciler(machineKind, machineInformer, clusterInformer, api, ssa)),
      machineInformer,
      clusterInformer,
    );
  });
  // The Secrets a host may read follow its namespace's machines (ADR 29).
  const hostReads = backends
    .filter((backend) => backend.api.providerRuns === 'host')
    .map((backend) => {
      const machineInformer = machines.get(backend.api.machine.kind) as Informer<InfraMachine>;
      const reconciler = new HostReadsReconciler(backend.api.name, machineInformer, api);
      const controller = controllerOf(reconciler);
      // Only what changes the list: a machine's coming or going, its user-data reference, its owner, being provisioned.
      const enqueue = (m: InfraMachine): void => controller.enqueue(reconciler.keyOf(m));
      machineInformer
        .on('add', enqueue)
        .on('delete', enqueue)
        .on('update', (m, old) => {
          if (userDataListing(m) !== userDataListing(old)) enqueue(m);
        });
      const keys = (): string[] => [...new Set(machineInformer.list().map((m) => reconciler.keyOf(m)))];
      return [keys, controller] as const;
    });
  return {
    vm,
    image,
    clusters: clusterControllers,
    templates: templateControllers,
    placements,
    hostReads,
    providerRole: providerRoleController(watched, options, ssa, controllerOf),
    ...(shard ? { shard } : {}),
  };
}

/** A controller shard's claims on namespaces, with --namespace-selector. */
function namespaceShard(
  ctx: RoleContext,
  { namespaceShard: scope, leaseNamespace }: ControllerRoleOptions,
  { namespaces, leases }: Watched,
  events: EventRecorder,
  controllerOptions: ControllerOptions,
): NamespaceShard | undefined {
  return scope && namespaces ? new NamespaceShard(ctx, { scope, namespaces, leases, leaseNamespace, events, controllerOptions }) : undefined;
}

/** NoProviderRole: woken by its Provider's changes and by the Leases of its class's role. */
function providerRoleController(
  { providers, leases }: Watched,
  options: ControllerRoleOptions,
  ssa: ServerSideApply,
  controllerOf: (reconciler: Reconciler) => Controller,
): Controller {
  const reconciler = new ProviderRoleReconciler(providers, leases, options.leaseNamespace, ssa, systemClock);
  const controller = controllerOf(reconciler);
  onOwnChange(providers, controller);
  const wake = (lease: Lease): void => reconciler.providersOf(lease).forEach((p) => controller.enqueue(keyOf(p)));
  leases
    .on('add', (l) => (reconciler.observe(l), wake(l)))
    .on('update', (l) => (reconciler.observe(l), wake(l)))
    .on('delete', (l) => (reconciler.forget(l), wake(l)));
  return controller;
}

/** What of a machine decides whether its user-data is on the hosts' list (host-reads/decide.ts). */
function userDataListing(m: InfraMachine | undefined): string {
  return JSON.stringify([m?.metadata.deletionTimestamp, m?.metadata.ownerReferences, m?.spec.userDataSecretRef, m?.status?.initialization?.provisioned]);
}

/** A placement controller listening to its machines, and to their clusters' changes. */
function placementController(controller: Controller, machineInformer: Informer<InfraMachine>, clusterInformer: Informer<InfraCluster>): Controller {
  onOwnChange(machineInformer, controller);
  // A cluster publishing failure domains unblocks its machines.
  onAnyChange(
    clusterInformer,
    (c) =>
      machineInformer
        .list(c.metadata.namespace)
        .filter((m) => !m.spec.failureDomain)
        .map(keyOf),
    (k) => controller.enqueue(k),
  );
  return controller;
}

/**
 * Watches, not polling: each change requeues exactly what it affects. Only a VM's own change
 * runs it while it backs off after a failure; its neighbours' events leave it to its backoff.
 */
function routeEvents({ vms, providers, classes, images, machines }: Watched, controllers: Controllers): void {
  const { vm: vmController, image: imageController } = controllers;
  vms
    .on('add', (vm) => vmAndNeighbours(vms, vm).forEach((k) => vmController.enqueue(k, { new: k === keyOf(vm) })))
    .on('update', (vm, old) => vmAndNeighbours(vms, vm, old).forEach((k) => vmController.enqueue(k, { changed: k === keyOf(vm) && isOwnChange(vm, old) })))
    .on('delete', (vm) => vmAndNeighbours(vms, vm).forEach((k) => vmController.enqueue(k, { changed: k === keyOf(vm) })));
  const mirror = (key: string, atOnce: boolean): void => (atOnce ? vmController.enqueue(key) : vmController.enqueueAfter(key, MIRROR_COALESCE_MS));
  for (const inf of machines.values()) {
    inf
      .on('add', (m) => ownerVmKeys(m).forEach((k) => mirror(k, mirrorsAtOnce(m, undefined))))
      .on('update', (m, old) => ownerVmKeys(m).forEach((k) => mirror(k, mirrorsAtOnce(m, old))))
      .on('delete', (m) => ownerVmKeys(m).forEach((k) => vmController.enqueue(k)));
  }
  onAnyChange(
    classes,
    (c) => vms.byIndex(BY_CLASS, c.metadata.name ?? '').map(keyOf),
    (k) => vmController.enqueue(k),
  );
  onAnyChange(
    images,
    (i) => vms.byIndex(BY_IMAGE, i.metadata.name ?? '').map(keyOf),
    (k) => vmController.enqueue(k),
  );
  onOwnChange(images, imageController);
  // Selectors match labels, not names: any Provider change may affect every VM and cluster of its namespace.
  onAnyChange(
    providers,
    (p) => vms.list(p.metadata.namespace).map(keyOf),
    (k) => vmController.enqueue(k),
  );
  for (const [inf, controller] of controllers.clusters) {
    onOwnChange(inf, controller);
    onAnyChange(
      providers,
      (p) => inf.list(p.metadata.namespace).map(keyOf),
      (k) => controller.enqueue(k),
    );
  }
}

/** A namespace a controller shard comes to serve: its VMs, clusters and templates run at once. */
function runNamespace({ vms }: Watched, controllers: Controllers, ns: string): void {
  vms.list(ns).forEach((vm) => controllers.vm.enqueue(keyOf(vm)));
  for (const [inf, controller] of [...controllers.clusters, ...controllers.templates]) inf.list(ns).forEach((o) => controller.enqueue(keyOf(o)));
}

/** Starts every controller and the resyncs of those that have them; returns the controllers started. */
function startControllers({ vms, images }: Watched, built: Controllers, signal: AbortSignal): Controller[] {
  const controllers = [
    built.vm,
    built.image,
    ...built.placements,
    ...built.clusters.map(([, c]) => c),
    ...built.templates.map(([, c]) => c),
    ...built.hostReads.map(([, c]) => c),
    built.providerRole,
    ...(built.shard ? [built.shard.claims] : []),
  ];
  for (const c of controllers) c.start();
  built.shard?.startResync(signal);
  built.vm.startResync(() => vms.list().map(keyOf), signal);
  built.image.startResync(() => images.list().map(keyOf), signal);
  for (const [inf, controller] of [...built.clusters, ...built.templates]) controller.startResync(() => inf.list().map(keyOf), signal);
  for (const [keys, controller] of built.hostReads) controller.startResync(keys, signal);
  return controllers;
}

/** The VirtualMachine that owns an infrastructure machine, if any. */
function ownerVmKeys(machine: InfraMachine): string[] {
  const owner = machine.metadata.ownerReferences?.find(
    (r) => r.controller && r.kind === VirtualMachineKind.kind && r.apiVersion === apiVersionOf(VirtualMachineKind),
  );
  return owner && machine.metadata.namespace ? [`${machine.metadata.namespace}/${owner.name}`] : [];
}

/** What may fix a VM's failure: its spec, its deletion, the metadata it is placed and paused by (not its status). */
function isOwnChange(vm: VirtualMachine, old: VirtualMachine | undefined): boolean {
  const own = (x: VirtualMachine | undefined): string =>
    JSON.stringify([x?.metadata.generation, x?.metadata.deletionTimestamp, x?.metadata.labels, x?.metadata.annotations, x?.metadata.finalizers]);
  return own(vm) !== own(old);
}

/** A changed VM, and the neighbours its change may unblock. */
function vmAndNeighbours(vms: Informer<VirtualMachine>, vm: VirtualMachine, old?: VirtualMachine): string[] {
  return [keyOf(vm), ...neighboursToRecheck(vms.byIndex(WAITING_ON_NEIGHBOURS, vm.metadata.namespace ?? ''), vm, old).map(keyOf)];
}

function reportPhases(vms: Informer<VirtualMachine>, metrics: RoleContext['metrics'], signal: AbortSignal): void {
  const phases = ['Deleting', 'Paused', 'Ready', 'Provisioning', 'Pending'] as const;
  const update = (): void => {
    const counts = Object.fromEntries(phases.map((p) => [p, 0])) as Record<(typeof phases)[number], number>;
    for (const vm of vms.list()) {
      const conditions = vm.status?.conditions ?? [];
      const phase = vm.metadata.deletionTimestamp
        ? 'Deleting'
        : vm.spec.paused
          ? 'Paused'
          : conditions.some((c) => c.type === 'Ready' && c.status === 'True')
            ? 'Ready'
            : vm.status?.scheduled
              ? 'Provisioning'
              : 'Pending';
      counts[phase] += 1;
    }
    for (const p of phases) metrics.virtualMachines.set({ phase: p }, counts[p]);
  };
  update();
  const timer = setInterval(update, 5000);
  timer.unref();
  signal.addEventListener('abort', () => clearInterval(timer), { once: true });
}
