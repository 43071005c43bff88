// Every reconciler's pass writes status at most once, counted on a real
// kube-apiserver. Each reconciler is built in this process as its role builds
// it (real informers, ServerSideApply, EventRecorder), except that the client
// it writes with counts its writes; passes are run one at a time by calling
// reconcile(), over a table of cases per reconciler, each in a namespace of
// its own, with the caches showing the previous pass's writes before the next.
//
// How writes are counted, and what an idle pass is: test/support/reconcile-passes.ts.
//
// The provider-side reconcilers run the test-only fake backend (an in-memory
// cloud), so this suite has a control plane of its own, where the fake kinds
// and CAPI's Cluster and Machine kinds are installed. It runs no garbage
// collector: owner references here may name CAPI objects that are not there.
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { ProviderKind, type Provider } from '../../infra/api/banlieue.io/v1alpha1/provider.js';
import { VirtualMachineKind, type VirtualMachine } from '../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import { VMClassKind, type VMClass } from '../../infra/api/banlieue.io/v1alpha1/vm-class.js';
import { VMImageKind, type VMImage } from '../../infra/api/banlieue.io/v1alpha1/vm-image.js';
import type { InfraCluster } from '../../infra/api/infrastructure.banlieue.io/v1alpha1/infra-cluster.js';
import type { InfraMachine } from '../../infra/api/infrastructure.banlieue.io/v1alpha1/infra-machine.js';
import { FieldManager, Finalizer } from '../../infra/api/well-known.js';
import { toCustomResourceDefinition } from '../../infra/crds/custom-resource-definition.js';
import { BackendCatalog, startBackend, type RunningBackend } from '../../controller/backends/descriptor.js';
import { BUILT_IN_BACKENDS } from '../../controller/backends/registry.js';
import { CapiMachinePlacementReconciler } from '../../controller/reconcilers/capi-machine-placement/reconciler.js';
import { ImageRowsReconciler } from '../../controller/reconcilers/image-rows/reconciler.js';
import { InfraClusterReconciler } from '../../controller/reconcilers/infra-cluster/reconciler.js';
import { InfraMachineReconciler } from '../../controller/reconcilers/infra-machine/reconciler.js';
import { MachineTemplateReconciler, type MachineTemplate } from '../../controller/reconcilers/machine-template/reconciler.js';
import { isOnProvider } from '../../controller/reconcilers/provider/machines-on-provider.js';
import { ProviderReconciler } from '../../controller/reconcilers/provider/reconciler.js';
import { VirtualMachineReconciler } from '../../controller/reconcilers/virtual-machine/reconciler.js';
import { VMImageReconciler } from '../../controller/reconcilers/vm-image/reconciler.js';
import { systemClock } from '../../controller/runtime/clock.js';
import type { Reconciler } from '../../controller/runtime/controller.js';
import { hasFinalizer } from '../../controller/runtime/finalizers.js';
import { keyOf } from '../../controller/runtime/informer.js';
import { KubeApi } from '../../controller/runtime/kube-api.js';
import { loadKubeConfig } from '../../controller/runtime/kube-config.js';
import { silentLogger } from '../../controller/runtime/log.js';
import { Metrics } from '../../controller/runtime/metrics.js';
import { ServerSideApply } from '../../controller/runtime/server-side-apply.js';
import { SHARED_READ_TTL_MS } from '../../controller/runtime/shared-reads.js';
import { buildTools, ControlPlane } from '../support/control-plane.js';
import { CountingKubeApi, statusWrites, type ApiWrite } from '../support/counting-kube-api.js';
import { applyCrdsFromDist } from '../support/crds.js';
import { fakeDescriptor } from '../support/fake-backend/descriptor.js';
import { FakeCloud } from '../support/fake-backend/fake-cloud.js';
import { FakeClusterKind, FakeMachineKind, FakeMachineTemplateKind, type FakeMachineSpec } from '../support/fake-backend/fake-machine.js';
import { installFakeBackend } from '../support/fake-backend/install.js';
import { FLAKY_MACHINE, HUGE_PROVIDER, LONG_TASK_MACHINE, withOddAnswers } from '../support/fake-backend/odd-answers.js';
import { runningStatus, type Obj } from '../support/fixtures.js';
import { PlaneClient } from '../support/plane-client.js';
import { waitFor } from '../support/wait.js';
import { eventsRegarding } from '../support/events.js';
import { applyObjects } from '../support/private-plane-fixtures.js';
import { CaseCaches, PassDriver, SettledEventRecorder, statusWriteTable, statusWritten, type Pass, type World } from '../support/reconcile-passes.js';

const CORE = 'banlieue.io/v1alpha1';
const INFRA = 'infrastructure.banlieue.io/v1alpha1';
const CAPI = 'cluster.x-k8s.io/v1beta2';
const MACHINE_FINALIZER = Finalizer.infraMachine(FakeMachineKind.kind);
const ZONE = 'lab-zone';
/** A VirtualMachine name long enough that its user-data placeholder renders past what a Secret holds. */
const BIG_USER_DATA_VM = `web-${'c'.repeat(56)}`;

let cp: ControlPlane;
let client: PlaneClient;
/** The informers' client: they only read, and are not counted. */
let reads: KubeApi;
const cloud = new FakeCloud(0);
const fake = withOddAnswers(fakeDescriptor(cloud));
const catalog = new BackendCatalog([...BUILT_IN_BACKENDS.all, fake]);
let backend: RunningBackend<FakeMachineSpec>;

beforeAll(async () => {
  const tools = await buildTools();
  cp = await ControlPlane.start(tools, { controllerManager: false });
  await applyCrdsFromDist(cp);
  await installFakeBackend(cp);
  await applyObjects(cp, [toCustomResourceDefinition(FakeMachineTemplateKind)]);
  for (const kind of ['clusters', 'machines']) {
    await cp.kubectl(['apply', '--server-side', '-f', join(tools.capiModuleDir, `core/config/crd/bases/cluster.x-k8s.io_${kind}.yaml`)]);
  }
  await cp.kubectl([
    'wait',
    '--for=condition=Established',
    '--timeout=60s',
    'crd',
    'fakemachinetemplates.infrastructure.banlieue.io',
    'clusters.cluster.x-k8s.io',
    'machines.cluster.x-k8s.io',
  ]);
  client = new PlaneClient(cp.kubeconfigPath);
  reads = new KubeApi(loadKubeConfig(cp.kubeconfigPath));
  backend = startBackend(fake, {}) as RunningBackend<FakeMachineSpec>;
}, 180_000);

afterAll(async () => {
  await cp?.stop();
});

// ---------------------------------------------------------------------------------------------
// A world per case: its namespace, caches, and the reconciler writing through a counting client.

/** What a reconciler writes with: the counting client, and the helpers a role builds on its client. */
interface Writer {
  readonly api: CountingKubeApi;
  readonly ssa: ServerSideApply;
  readonly events: SettledEventRecorder;
}

/** A world whose reconciler `build` makes on the case's caches and the counting client. */
async function open<X extends object>(
  prefix: string,
  fieldManager: string,
  build: (caches: CaseCaches, writer: Writer, ns: string) => X & { reconciler: Reconciler },
): Promise<World & X> {
  const ns = await client.namespace(prefix);
  const caches = new CaseCaches(reads, ns);
  const api = new CountingKubeApi(loadKubeConfig(cp.kubeconfigPath));
  const events = new SettledEventRecorder(api, fieldManager, 'status-writes-test', silentLogger());
  const built = build(caches, { api, ssa: new ServerSideApply(api, fieldManager), events }, ns);
  await caches.start();
  return { ...built, ns, driver: new PassDriver(built.reconciler, api, events, caches), close: () => caches.close() };
}

const writesOf = (pass: Pass | undefined, method: string, suffix: string): ApiWrite[] =>
  (pass?.writes ?? []).filter((w) => w.method === method && w.path.endsWith(suffix));

// ---------------------------------------------------------------------------------------------
// Objects, as users and provider roles write them.

type Conditioned = { status?: { conditions?: { type: string; status: string; reason: string }[] } };
const conditionOf = (obj: Obj | undefined, type: string): { status: string; reason: string } | undefined =>
  (obj as Conditioned | undefined)?.status?.conditions?.find((c) => c.type === type);

const ref = (apiVersion: string, kind: string, name: string, namespace?: string): Obj => ({
  apiVersion,
  kind,
  metadata: { name, ...(namespace ? { namespace } : {}) },
});
const providerRef = (ns: string, name = 'lab'): Obj => ref(CORE, 'Provider', name, ns);
const machineRef = (ns: string, name: string): Obj => ref(INFRA, FakeMachineKind.kind, name, ns);
const vmRef = (ns: string, name: string): Obj => ref(CORE, 'VirtualMachine', name, ns);

const credentials = (ns: string): Obj => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 'fake-creds', namespace: ns },
  stringData: { token: 's3cr3t' },
});

function provider(ns: string, name = 'lab', spec: Record<string, unknown> = {}): Obj {
  return {
    apiVersion: CORE,
    kind: 'Provider',
    metadata: { name, namespace: ns },
    spec: {
      providerClassRef: { name: 'fake' },
      connection: { endpoint: `https://${name}.fake.invalid`, credentialsRef: { name: 'fake-creds' } },
      capabilities: { storageClasses: [{ name: 'fast', target: { pool: 'p1' } }], networkClasses: [{ name: 'lan', target: { bridge: 'br0' } }] },
      ...spec,
    },
  };
}

const failureDomain = (name: string): Record<string, unknown> => ({
  name,
  labels: { name },
  attributes: { availableStorageClasses: ['fast'], availableNetworkClasses: ['lan'], raw: { zone: name } },
});

/** The Provider `lab` with its credentials, publishing `zones` as its provider role would. */
async function publishedLab(ns: string, zones = [ZONE]): Promise<void> {
  await client.apply(credentials(ns));
  await client.apply(provider(ns));
  await client.applyStatus(providerRef(ns), { failureDomains: zones.map(failureDomain) });
}

function image(name: string, providerClass = 'fake'): Obj {
  return {
    apiVersion: CORE,
    kind: 'VMImage',
    metadata: { name },
    spec: {
      osFamily: 'linux',
      osDistribution: 'debian',
      osVersion: '13',
      architecture: 'amd64',
      sources: [{ providerClass, kind: 'Template', ref: 'debian-13' }],
    },
  };
}

const imageRows = (ns: string, ready = true): Record<string, unknown> => ({ perProvider: [{ providerNamespace: ns, providerName: 'lab', ready }] });

function fakeMachine(ns: string, name: string, spec: Record<string, unknown> = {}, metadata: Partial<Obj['metadata']> = {}): Obj {
  return {
    apiVersion: INFRA,
    kind: FakeMachineKind.kind,
    metadata: { name, namespace: ns, ...metadata },
    spec: { image: 'debian-13', cpus: 1, memoryMiB: 512, ...spec },
  };
}

/** The owner CAPI's MachineSet gives a machine it makes, before the Machine that takes it over. */
const machineSetOwner = { apiVersion: CAPI, kind: 'MachineSet', name: 'workers', uid: '00000000-0000-4000-8000-000000000002', controller: true };

/** What CAPI does next: a Machine naming the machine and its bootstrap data, then owning it in the MachineSet's stead. */
async function handOverToMachine(ns: string, name: string): Promise<void> {
  await client.apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: `${name}-bootstrap`, namespace: ns }, stringData: { value: '#cloud-config\n' } });
  const machine = await client.apply({
    apiVersion: CAPI,
    kind: 'Machine',
    metadata: { name, namespace: ns },
    spec: {
      clusterName: 'work',
      bootstrap: { dataSecretName: `${name}-bootstrap` },
      infrastructureRef: { apiGroup: 'infrastructure.banlieue.io', kind: FakeMachineKind.kind, name },
    },
  });
  const ownedBy = { apiVersion: CAPI, kind: 'Machine', name, uid: machine.metadata.uid ?? '', controller: true, blockOwnerDeletion: true };
  await client.patch(machineRef(ns, name), { metadata: { ownerReferences: [ownedBy] } });
}

/** A CAPI Cluster of the namespace; paused when `paused`. */
const capiCluster = (ns: string, name: string, paused: boolean): Obj => ({
  apiVersion: CAPI,
  kind: 'Cluster',
  metadata: { name, namespace: ns },
  spec: { paused },
});

// ---------------------------------------------------------------------------------------------

describe('a pass of each reconciler writes status at most once', () => {
  describe('VirtualMachine', () => {
    type VmWorld = World & { readonly cls: string; readonly img: string };

    const openVms = (): Promise<VmWorld> =>
      open('sw-vm', FieldManager.controller, (caches, { api, ssa, events }, ns) => {
        const machines = new Map(catalog.all.map((b) => [b.api.machine.kind, caches.watch<InfraMachine>(b.api.machine)] as const));
        const reconciler = new VirtualMachineReconciler({
          api,
          ssa,
          events,
          clock: systemClock,
          metrics: new Metrics(),
          backends: catalog,
          vms: caches.watch<VirtualMachine>(VirtualMachineKind),
          providers: caches.watch<Provider>(ProviderKind),
          classes: caches.watch<VMClass>(VMClassKind),
          images: caches.watch<VMImage>(VMImageKind),
          machines,
        });
        return { reconciler, cls: `${ns}-small`, img: `${ns}-linux` };
      });

    /** A class and an image ready on `lab`, and (unless `withoutProvider`) `lab` publishing one failure domain. */
    async function lab(w: VmWorld, withoutProvider = false): Promise<void> {
      if (!withoutProvider) await publishedLab(w.ns);
      await client.apply({
        apiVersion: CORE,
        kind: 'VMClass',
        metadata: { name: w.cls },
        spec: {
          hardware: { cpus: 2, memoryMiB: 1024, disks: [{ name: 'os', sizeGiB: 10, storageClass: 'fast' }] },
          network: { interfaces: [{ name: 'eth0', networkClass: 'lan' }] },
        },
      });
      await client.apply(image(w.img));
      await client.applyStatus(ref(CORE, 'VMImage', w.img), imageRows(w.ns));
    }

    function vm(w: VmWorld, name: string, spec: Record<string, unknown> = {}, metadata: Partial<Obj['metadata']> = {}): Obj {
      return {
        apiVersion: CORE,
        kind: 'VirtualMachine',
        metadata: { name, namespace: w.ns, ...metadata },
        spec: { classRef: { name: w.cls }, imageRef: { name: w.img }, ...spec },
      };
    }

    /** A VM converged to its machine, and (`provisioned`) the machine's provider reporting it running, mirrored. */
    async function placed(w: VmWorld, name: string, spec: Record<string, unknown> = {}, provisioned = false): Promise<string> {
      await lab(w);
      await client.apply(vm(w, name, spec));
      const key = `${w.ns}/${name}`;
      await w.driver.untilIdle(key);
      if (provisioned) {
        await client.applyStatus(machineRef(w.ns, name), runningStatus('192.0.2.10'));
        await w.driver.untilIdle(key);
      }
      return key;
    }

    statusWriteTable(openVms, [
      {
        name: 'a new VirtualMachine: its finalizer alone, then its machine and its status, which the pass that sees the machine keeps',
        given: async (w) => {
          await lab(w);
          await client.apply(vm(w, 'web'));
          return `${w.ns}/web`;
        },
        then: async (w, _key, counted) => {
          expect(writesOf(counted[0], 'PATCH', '/virtualmachines/web')).toHaveLength(1);
          // The status says the machine its pass made exists: the pass that finds it in the cache has nothing to add.
          expect(counted.map(statusWritten)).toEqual([0, 1, 0]);
          expect(await client.get(machineRef(w.ns, 'web'))).toBeDefined();
          const live = await client.get(vmRef(w.ns, 'web'));
          expect(conditionOf(live, 'Scheduled')).toMatchObject({ status: 'True' });
          expect(conditionOf(live, 'InfrastructureReady')).toMatchObject({ status: 'False', reason: 'Pending' });
        },
      },
      {
        name: 'its finalizer there already: the machine and the status in the first pass',
        given: async (w) => {
          await lab(w);
          await client.apply(vm(w, 'web', {}, { finalizers: [Finalizer.virtualMachine] }));
          return `${w.ns}/web`;
        },
        then: (_w, _key, counted) => {
          expect(writesOf(counted[0], 'POST', '/fakemachines')).toHaveLength(1);
          expect(statusWritten(counted[0] as Pass)).toBe(1);
        },
      },
      {
        name: 'steady: converged, nothing changed',
        given: (w) => placed(w, 'web', {}, true),
        then: (_w, _key, counted) => expect(counted).toHaveLength(1),
      },
      {
        name: 'converging: its provider reports the machine running, and the VirtualMachine mirrors it',
        given: (w) => placed(w, 'web'),
        when: async (w) => void (await client.applyStatus(machineRef(w.ns, 'web'), runningStatus('192.0.2.10'))),
        then: async (w) => {
          const live = await client.get(vmRef(w.ns, 'web'));
          expect(conditionOf(live, 'Ready')).toMatchObject({ status: 'True' });
          expect((live as { status?: { addresses?: unknown } }).status?.addresses).toEqual([{ type: 'InternalIP', address: '192.0.2.10' }]);
        },
      },
      {
        name: 'not schedulable: no Provider in its namespace',
        given: async (w) => {
          await lab(w, true);
          await client.apply(vm(w, 'web'));
          return `${w.ns}/web`;
        },
        then: async (w) => expect(conditionOf(await client.get(vmRef(w.ns, 'web')), 'Scheduled')).toMatchObject({ status: 'False' }),
      },
      {
        name: 'an object in its way: a machine of its name that it does not control',
        given: async (w) => {
          await lab(w);
          await client.apply(fakeMachine(w.ns, 'web', { providerRef: { name: 'lab' } }));
          await client.apply(vm(w, 'web'));
          return `${w.ns}/web`;
        },
        then: async (w) =>
          expect(conditionOf(await client.get(vmRef(w.ns, 'web')), 'Scheduled')).toMatchObject({ status: 'False', reason: 'InfraMachineConflict' }),
      },
      {
        name: 'a refused write: its user-data Secret, rendered past the 1 MiB a Secret holds',
        given: async (w) => {
          await lab(w);
          // 400 KB whose placeholder renders to 1.6 MB with this name.
          await client.apply({
            apiVersion: 'v1',
            kind: 'Secret',
            metadata: { name: 'big-source', namespace: w.ns },
            stringData: { 'user-data': `#!/bin/sh\n${'echo ${VM_NAME}\n'.repeat(25_000)}` },
          });
          await client.apply(vm(w, BIG_USER_DATA_VM, { userData: { secretRef: { name: 'big-source' } } }));
          return `${w.ns}/${BIG_USER_DATA_VM}`;
        },
        // Each pass tries the create again, and the API server refuses it again.
        retriesRefused: true,
        then: async (w, _key, counted) => {
          expect(conditionOf(await client.get(vmRef(w.ns, BIG_USER_DATA_VM)), 'Scheduled')).toMatchObject({ status: 'False', reason: 'CreateRefused' });
          const refused = w.driver.passes.find((p) => p.writes.some((x) => x.method === 'POST' && x.path.endsWith('/secrets') && x.code === 422));
          expect(refused && statusWritten(refused)).toBe(1);
          expect(counted[counted.length - 1]?.writes.map((x) => `${x.method} ${x.code ?? ''}`)).toEqual(['POST 422']);
        },
      },
      {
        name: 'a refused write: an edit its created machine cannot take (a smaller disk)',
        given: (w) => placed(w, 'web', { hardwareOverride: { diskOverrides: [{ name: 'os', sizeGiB: 20 }] } }, true),
        when: async (w) => void (await client.patch(vmRef(w.ns, 'web'), { spec: { hardwareOverride: { diskOverrides: [{ name: 'os', sizeGiB: 15 }] } } })),
        // Each pass offers the edit again, and admission refuses it.
        retriesRefused: true,
        then: async (w) => {
          expect(conditionOf(await client.get(vmRef(w.ns, 'web')), 'Ready')).toMatchObject({ status: 'False', reason: 'SpecNotApplied' });
          expect((await client.get(machineRef(w.ns, 'web')))?.spec?.osDiskSizeGiB).toBe(20);
        },
      },
      {
        name: 'paused',
        given: (w) => placed(w, 'web'),
        when: async (w) => void (await client.patch(vmRef(w.ns, 'web'), { spec: { paused: true } })),
        then: async (w) => expect(conditionOf(await client.get(vmRef(w.ns, 'web')), 'Paused')).toMatchObject({ status: 'True' }),
      },
      {
        name: 'deleting: its machine deleted, then its finalizer removed',
        given: (w) => placed(w, 'web', {}, true),
        when: (w) => client.delete(vmRef(w.ns, 'web')),
        then: async (w) => {
          expect(await client.get(vmRef(w.ns, 'web'))).toBeUndefined();
          expect(await client.get(machineRef(w.ns, 'web'))).toBeUndefined();
        },
      },
    ]);
  });

  describe('infrastructure machine (the fake backend)', () => {
    const openMachines = (): Promise<World> => {
      // A case that failed while the cloud held its destroys does not hold the next one's.
      cloud.holdDestroys = false;
      return open('sw-im', FieldManager.provider('fake'), (caches, { api, ssa, events }) => ({
        reconciler: new InfraMachineReconciler(
          backend,
          caches.watch<InfraMachine>(FakeMachineKind),
          caches.watch<Provider>(ProviderKind),
          caches.watch<VMImage>(VMImageKind),
          api,
          ssa,
          events,
          systemClock,
          {
            pollMs: 1_000,
            resyncMs: 60_000,
            taskPollMs: 500,
          },
        ),
      }));
    };

    const onLab = { providerRef: { name: 'lab' }, failureDomain: ZONE };

    /** The Provider `lab` publishing its failure domain, and a machine placed there; its key. */
    async function machineOnLab(w: World, name: string, metadata: Partial<Obj['metadata']> = {}): Promise<string> {
      await publishedLab(w.ns);
      await client.apply(fakeMachine(w.ns, name, onLab, metadata));
      return `${w.ns}/${name}`;
    }

    /** A machine on `lab`, its passes run until it rests (a running VM, for an ordinary name). */
    async function converged(w: World, name: string): Promise<string> {
      const key = await machineOnLab(w, name);
      await w.driver.untilIdle(key);
      return key;
    }

    const readyOf = async (w: World, name: string): Promise<{ status: string; reason: string } | undefined> =>
      conditionOf(await client.get(machineRef(w.ns, name)), 'Ready');

    statusWriteTable(openMachines, [
      {
        name: 'a new machine: its finalizer and providerID alone, then where, then the create task, then the VM; no Warning on the way',
        given: (w) => machineOnLab(w, 'm'),
        then: async (w, _key, counted) => {
          expect(writesOf(counted[0], 'PATCH', '/fakemachines/m')).toHaveLength(1);
          expect(statusWritten(counted[0] as Pass)).toBe(0);
          expect(await readyOf(w, 'm')).toMatchObject({ status: 'True' });
          // Provisioning while the create task runs is a step, not trouble (CreateStarted and Created say so).
          expect((await eventsRegarding(client.api, w.ns, 'm')).filter((e) => e.type === 'Warning').map((e) => e.reason)).toEqual([]);
        },
      },
      {
        name: "made by CAPI's MachineSet, its Machine still to take it over: nothing written until the Machine does, then the usual passes",
        given: (w) => machineOnLab(w, 'm', { ownerReferences: [machineSetOwner] }),
        then: async (w, key, counted) => {
          // The MachineSet patches its new machine again with a resourceVersion precondition: a write here would conflict.
          expect(counted).toHaveLength(1);
          expect(counted[0]?.writes).toEqual([]);
          expect(counted[0]?.result?.requeueAfterMs).toBeGreaterThan(0);
          const waiting = await client.get(machineRef(w.ns, 'm'));
          expect(waiting?.metadata.finalizers).toBeUndefined();
          expect(waiting?.status).toBeUndefined();
          await handOverToMachine(w.ns, 'm');
          const passes = await w.driver.untilIdle(key);
          expect(writesOf(passes[0], 'PATCH', '/fakemachines/m')).toHaveLength(1);
          expect(await readyOf(w, 'm')).toMatchObject({ status: 'True' });
        },
      },
      {
        name: "made by CAPI's MachineSet and no Machine took it over within a poll period: it goes on and says what it waits for",
        given: async (w) => {
          const key = await machineOnLab(w, 'm', { ownerReferences: [machineSetOwner] });
          // Passes that write nothing until the poll period since its creation is over.
          await waitFor('the hand-over grace to end', async () => (await w.driver.pass(key)).writes.length > 0, 30_000);
          return key;
        },
        then: async (w) => expect(await readyOf(w, 'm')).toMatchObject({ status: 'False', reason: 'WaitingForBootstrapData' }),
      },
      {
        name: 'a Machine of a MachineDeployment, no failure domain yet: its finalizer, then nothing until the controller places it, then the usual passes',
        given: async (w) => {
          await publishedLab(w.ns, [ZONE, 'zone-b']);
          await client.apply(fakeMachine(w.ns, 'm', {}, { ownerReferences: [machineSetOwner] }));
          await handOverToMachine(w.ns, 'm');
          return `${w.ns}/m`;
        },
        then: async (w, key, counted) => {
          // Mirrored on the Machine by CAPI, a WaitingForFailureDomain status would cost two writes per Machine.
          expect(counted.map((p) => p.writes.length)).toEqual([1, 0]);
          expect(counted[1]?.result?.requeueAfterMs).toBeGreaterThan(0);
          expect((await client.get(machineRef(w.ns, 'm')))?.status).toBeUndefined();
          // What the controller's capi-machine-placement writes.
          await client.patch(machineRef(w.ns, 'm'), { spec: onLab });
          await w.driver.untilIdle(key);
          expect(await readyOf(w, 'm')).toMatchObject({ status: 'True' });
        },
      },
      {
        name: 'a Machine of a MachineDeployment the controller does not place within a poll period: it says it waits for a failure domain',
        given: async (w) => {
          await publishedLab(w.ns, [ZONE, 'zone-b']);
          await client.apply(fakeMachine(w.ns, 'm', {}, { ownerReferences: [machineSetOwner] }));
          await handOverToMachine(w.ns, 'm');
          const key = `${w.ns}/m`;
          await waitFor('the placement grace to end', async () => statusWritten(await w.driver.pass(key)) > 0, 30_000);
          return key;
        },
        then: async (w) => expect(await readyOf(w, 'm')).toMatchObject({ status: 'False', reason: 'WaitingForFailureDomain' }),
      },
      {
        name: 'its finalizer there already, no providerID yet: the providerID alone first',
        given: (w) => machineOnLab(w, 'm', { finalizers: [MACHINE_FINALIZER] }),
        then: async (w, _key, counted) => {
          expect(statusWritten(counted[0] as Pass)).toBe(0);
          expect((await client.get(machineRef(w.ns, 'm')))?.spec?.providerID).toMatch(/^fake:\/\//);
        },
      },
      {
        name: 'steady: running, nothing changed',
        given: (w) => converged(w, 'm'),
        then: (_w, _key, counted) => expect(counted).toHaveLength(1),
      },
      {
        name: 'paused by its annotation',
        given: (w) => converged(w, 'm'),
        when: async (w) => void (await client.patch(machineRef(w.ns, 'm'), { metadata: { annotations: { 'cluster.x-k8s.io/paused': '' } } })),
        then: async (w) => expect(conditionOf(await client.get(machineRef(w.ns, 'm')), 'Paused')).toMatchObject({ status: 'True' }),
      },
      {
        name: 'paused by its CAPI Cluster',
        given: async (w) => {
          await client.apply(capiCluster(w.ns, 'work', true));
          return machineOnLab(w, 'm', { labels: { 'cluster.x-k8s.io/cluster-name': 'work' } });
        },
        then: async (w) => expect(conditionOf(await client.get(machineRef(w.ns, 'm')), 'Paused')).toMatchObject({ status: 'True' }),
      },
      {
        name: 'its CAPI Cluster paused a moment after another pass read it: nothing written but Paused (clusterctl move copies next)',
        given: async (w) => {
          const inWork = { labels: { 'cluster.x-k8s.io/cluster-name': 'work' } };
          await client.apply(capiCluster(w.ns, 'work', false));
          await w.driver.pass(await machineOnLab(w, 'other', inWork));
          await client.apply(capiCluster(w.ns, 'work', true));
          await client.apply(fakeMachine(w.ns, 'm', onLab, inWork));
          return `${w.ns}/m`;
        },
        then: async (w) => {
          const m = await client.get(machineRef(w.ns, 'm'));
          expect(m?.spec?.providerID).toBeUndefined();
          expect(m?.metadata.finalizers).toBeUndefined();
          expect(conditionOf(m, 'Paused')).toMatchObject({ status: 'True' });
        },
      },
      {
        name: 'blocked: its Provider does not exist',
        given: async (w) => {
          await client.apply(fakeMachine(w.ns, 'm', { providerRef: { name: 'nowhere' } }));
          return `${w.ns}/m`;
        },
        then: async (w) => expect(await readyOf(w, 'm')).toMatchObject({ status: 'False', reason: 'ProviderNotFound' }),
      },
      {
        name: 'a refused status: the backend names a create task longer than status.taskRef takes',
        given: (w) => machineOnLab(w, LONG_TASK_MACHINE),
        // Each pass offers the backend's answer again, and the API server refuses it again.
        retriesRefused: true,
        then: async (w, _key, counted) => {
          expect(await readyOf(w, LONG_TASK_MACHINE)).toMatchObject({ status: 'False', reason: 'StatusRefused' });
          const refusedThenSaid = w.driver.passes.find((p) => statusWrites(p.writes).length === 2);
          expect(statusWrites(refusedThenSaid?.writes ?? []).map((s) => s.accepted)).toEqual([false, true]);
          expect(statusWrites(counted[counted.length - 1]?.writes ?? []).map((s) => s.code)).toEqual([422]);
        },
      },
      {
        name: 'a backend error retried with backoff: the status first, then the error',
        given: (w) => machineOnLab(w, FLAKY_MACHINE),
        then: async (w) => {
          expect(await readyOf(w, FLAKY_MACHINE)).toMatchObject({ status: 'False', reason: 'ProvisionFailed' });
          const failed = w.driver.passes.filter((p) => p.error !== undefined);
          expect(failed.map(statusWritten)).toEqual([1, 0]);
        },
      },
      {
        name: 'deleting, the backend failing to destroy the VM: DeletionFailed, then the error',
        given: (w) => converged(w, FLAKY_MACHINE),
        when: (w) => client.delete(machineRef(w.ns, FLAKY_MACHINE)),
        then: async (w, _key, counted) => {
          expect(await readyOf(w, FLAKY_MACHINE)).toMatchObject({ status: 'False', reason: 'DeletionFailed' });
          expect(counted.map((p) => [statusWritten(p), p.error !== undefined])).toEqual([
            [1, false],
            [1, true],
            [0, true],
          ]);
        },
      },
      {
        name: 'deleting: Deleting in a pass of its own, then the VM destroyed and the finalizer removed',
        given: (w) => converged(w, 'm'),
        when: (w) => client.delete(machineRef(w.ns, 'm')),
        then: async (w, _key, counted) => {
          expect(statusWritten(counted[0] as Pass)).toBe(1);
          expect(await client.get(machineRef(w.ns, 'm'))).toBeUndefined();
        },
      },
      {
        name: 'deleting while the backend is still destroying the VM',
        given: (w) => converged(w, 'm'),
        when: async (w) => {
          cloud.holdDestroys = true;
          await client.delete(machineRef(w.ns, 'm'));
        },
        then: async (w) => {
          cloud.holdDestroys = false;
          expect(await readyOf(w, 'm')).toMatchObject({ status: 'False', reason: 'Deleting' });
        },
      },
      {
        name: 'deleting with its credentials gone: DeletionFailed, once',
        given: (w) => converged(w, 'm'),
        when: async (w) => {
          await client.delete(credentials(w.ns));
          // Machine passes within a second of a read share its answer (SharedReads): the next ones read afresh.
          await delay(SHARED_READ_TTL_MS);
          await client.delete(machineRef(w.ns, 'm'));
        },
        then: async (w) => expect(await readyOf(w, 'm')).toMatchObject({ status: 'False', reason: 'DeletionFailed' }),
      },
    ]);
  });

  describe('Provider (the fake backend)', () => {
    const openProviders = (): Promise<World> =>
      open('sw-prov', FieldManager.provider('fake'), (caches, { api, ssa, events }) => {
        const providers = caches.watch<Provider>(ProviderKind);
        const machines = caches.watch<InfraMachine>(FakeMachineKind);
        // As the provider role finds them: the machines holding its finalizer that may have a VM on the Provider.
        const machinesOn = (p: Provider): string[] => {
          const all = providers.list(p.metadata.namespace);
          return machines
            .list(p.metadata.namespace)
            .filter((m) => hasFinalizer(m, MACHINE_FINALIZER) && isOnProvider(m, p, 'fake', all))
            .map(keyOf);
        };
        return { reconciler: new ProviderReconciler(backend, providers, api, ssa, events, systemClock, 60_000, machinesOn, 10_000) };
      });

    async function discovered(w: World, name = 'lab'): Promise<string> {
      await client.apply(credentials(w.ns));
      await client.apply(provider(w.ns, name));
      const key = `${w.ns}/${name}`;
      await w.driver.untilIdle(key);
      return key;
    }

    const conditionOfLab = async (w: World, type: string, name = 'lab'): Promise<{ status: string; reason: string } | undefined> =>
      conditionOf(await client.get(providerRef(w.ns, name)), type);

    statusWriteTable(openProviders, [
      {
        name: 'a new Provider: its finalizer and what discovery found, in one pass',
        given: async (w) => {
          await client.apply(credentials(w.ns));
          await client.apply(provider(w.ns));
          return `${w.ns}/lab`;
        },
        then: async (w, _key, counted) => {
          expect(writesOf(counted[0], 'PATCH', '/providers/lab')).toHaveLength(1);
          expect(statusWritten(counted[0] as Pass)).toBe(1);
          expect(await conditionOfLab(w, 'ProviderReachable')).toMatchObject({ status: 'True' });
        },
      },
      {
        name: 'steady: discovered, nothing changed',
        given: (w) => discovered(w),
        then: (_w, _key, counted) => expect(counted).toHaveLength(1),
      },
      {
        name: 'its credentials Secret missing',
        given: async (w) => {
          await client.apply(provider(w.ns));
          return `${w.ns}/lab`;
        },
        then: async (w) => expect(await conditionOfLab(w, 'ProviderReachable')).toMatchObject({ status: 'False' }),
      },
      {
        name: 'a refused status: more failure domains than a Provider status holds',
        given: async (w) => {
          await client.apply(credentials(w.ns));
          await client.apply(provider(w.ns, HUGE_PROVIDER));
          return `${w.ns}/${HUGE_PROVIDER}`;
        },
        // Each pass offers what discovery found again, and the API server refuses it again.
        retriesRefused: true,
        then: async (w, _key, counted) => {
          expect(await conditionOfLab(w, 'Ready', HUGE_PROVIDER)).toMatchObject({ status: 'False', reason: 'StatusRefused' });
          expect(statusWrites(counted[0]?.writes ?? []).map((s) => s.accepted)).toEqual([false, true]);
        },
      },
      {
        name: 'paused',
        given: async (w) => {
          await client.apply(credentials(w.ns));
          await client.apply(provider(w.ns, 'lab', { paused: true }));
          return `${w.ns}/lab`;
        },
        then: async (w) => expect(await conditionOfLab(w, 'Paused')).toMatchObject({ status: 'True' }),
      },
      {
        name: 'a second Provider on the endpoint of an older one',
        given: async (w) => {
          await discovered(w);
          const second = provider(w.ns, 'lab-2');
          (second.spec as { connection: { endpoint: string } }).connection.endpoint = 'https://lab.fake.invalid';
          await client.apply(second);
          return `${w.ns}/lab-2`;
        },
        then: async (w) => expect(await conditionOfLab(w, 'EndpointExclusive', 'lab-2')).toMatchObject({ status: 'False' }),
      },
      {
        name: 'deleting, no machine on it: the finalizer removed, no status',
        given: (w) => discovered(w),
        when: (w) => client.delete(providerRef(w.ns)),
        then: async (w, _key, counted) => {
          expect(counted.reduce((n, p) => n + statusWritten(p), 0)).toBe(0);
          expect(await client.get(providerRef(w.ns))).toBeUndefined();
        },
      },
      {
        name: 'deleting while a machine has a VM on it: still served',
        given: async (w) => {
          const key = await discovered(w);
          await client.apply(fakeMachine(w.ns, 'm', { providerRef: { name: 'lab' } }, { finalizers: [MACHINE_FINALIZER] }));
          return key;
        },
        when: (w) => client.delete(providerRef(w.ns)),
        then: async (w, _key, counted) => {
          expect(writesOf(counted[0], 'POST', '/events')).toHaveLength(1);
          expect((await client.get(providerRef(w.ns)))?.metadata.deletionTimestamp).toBeDefined();
        },
      },
    ]);
  });

  describe('VMImage rows (the fake backend)', () => {
    type RowsWorld = World & { readonly img: string };
    const openRows = (): Promise<RowsWorld> =>
      open('sw-rows', FieldManager.provider('fake'), (caches, { api, ssa }, ns) => ({
        reconciler: new ImageRowsReconciler(backend, caches.watch<VMImage>(VMImageKind), caches.watch<Provider>(ProviderKind), api, ssa, 60_000),
        img: `${ns}-linux`,
      }));

    const rowsOf = async (w: RowsWorld): Promise<unknown> => (await client.get(ref(CORE, 'VMImage', w.img)))?.status?.perProvider;

    /** The Provider `lab` (with its credentials unless `withoutCredentials`) and the image, whose source names `providerClass`. */
    async function imageOnLab(w: RowsWorld, providerClass = 'fake', withoutCredentials = false): Promise<string> {
      if (!withoutCredentials) await client.apply(credentials(w.ns));
      await client.apply(provider(w.ns));
      await client.apply(image(w.img, providerClass));
      return w.img;
    }

    statusWriteTable(openRows, [
      {
        name: 'a new image with a source for the backend',
        given: (w) => imageOnLab(w),
        then: async (w) => expect(await rowsOf(w)).toEqual([expect.objectContaining({ providerName: 'lab', ready: true })]),
      },
      {
        name: 'an image without a source for the backend: no rows, no write',
        given: (w) => imageOnLab(w, 'vsphere'),
        then: async (w, _key, counted) => {
          expect(counted).toHaveLength(1);
          expect(await rowsOf(w)).toBeUndefined();
        },
      },
      {
        name: 'a Provider without its credentials: a row not ready',
        given: (w) => imageOnLab(w, 'fake', true),
        then: async (w) => expect(await rowsOf(w)).toEqual([expect.objectContaining({ providerName: 'lab', ready: false })]),
      },
      {
        name: 'a second Provider comes',
        given: async (w) => {
          await w.driver.untilIdle(await imageOnLab(w));
          return w.img;
        },
        when: async (w) => void (await client.apply(provider(w.ns, 'lab-2'))),
        then: async (w) => expect(await rowsOf(w)).toHaveLength(2),
      },
    ]);
  });

  describe('VMImage readiness', () => {
    type ImageWorld = World & { readonly img: string };
    const openImages = (): Promise<ImageWorld> =>
      open('sw-img', FieldManager.controller, (caches, { ssa }, ns) => ({
        reconciler: new VMImageReconciler(caches.watch<VMImage>(VMImageKind), ssa, systemClock),
        img: `${ns}-linux`,
      }));

    const imageRef = (w: ImageWorld): Obj => ref(CORE, 'VMImage', w.img);
    const created = async (w: ImageWorld): Promise<string> => {
      await client.apply(image(w.img));
      await w.driver.untilIdle(w.img);
      return w.img;
    };

    statusWriteTable(openImages, [
      {
        name: 'a new image: no rows yet',
        given: async (w) => {
          await client.apply(image(w.img));
          return w.img;
        },
        then: async (w) => expect(conditionOf(await client.get(imageRef(w)), 'Ready')).toMatchObject({ status: 'False', reason: 'NoProviderRows' }),
      },
      {
        name: 'steady',
        given: created,
        then: (_w, _key, counted) => expect(counted).toHaveLength(1),
      },
      {
        name: 'a provider role writes its row',
        given: created,
        when: async (w) => void (await client.applyStatus(imageRef(w), { perProvider: [{ providerNamespace: w.ns, providerName: 'lab', ready: true }] })),
        then: async (w) => expect(conditionOf(await client.get(imageRef(w)), 'Ready')).toMatchObject({ status: 'True' }),
      },
      {
        name: 'a spec edit: a new generation observed',
        given: created,
        when: async (w) => void (await client.patch(imageRef(w), { spec: { osVersion: '13.1' } })),
        then: async (w) => expect((await client.get(imageRef(w)))?.status?.observedGeneration).toBe(2),
      },
      {
        name: 'gone',
        given: created,
        when: (w) => client.delete(imageRef(w)),
        then: (_w, _key, counted) => expect(counted).toHaveLength(1),
      },
    ]);
  });

  describe('machine template', () => {
    const openTemplates = (): Promise<World> =>
      open('sw-tpl', FieldManager.controller, (caches, { ssa }) => ({
        reconciler: new MachineTemplateReconciler(fake, caches.watch<MachineTemplate>(FakeMachineTemplateKind), ssa),
      }));

    const templateRef = (ns: string): Obj => ref(INFRA, FakeMachineTemplateKind.kind, 'small', ns);
    const template = (ns: string, finalizers: string[] = []): Obj => ({
      ...templateRef(ns),
      metadata: { name: 'small', namespace: ns, ...(finalizers.length ? { finalizers } : {}) },
      spec: { template: { spec: { image: 'debian-13', cpus: 2, memoryMiB: 2048 } } },
    });

    statusWriteTable(openTemplates, [
      {
        name: 'a new template: the capacity it offers',
        given: async (w) => {
          await client.apply(template(w.ns));
          return `${w.ns}/small`;
        },
        then: async (w) => expect((await client.get(templateRef(w.ns)))?.status?.capacity).toMatchObject({ cpu: '2' }),
      },
      {
        name: 'steady',
        given: async (w) => {
          await client.apply(template(w.ns));
          await w.driver.untilIdle(`${w.ns}/small`);
          return `${w.ns}/small`;
        },
        then: (_w, _key, counted) => expect(counted).toHaveLength(1),
      },
      {
        name: 'deleting: nothing written',
        given: async (w) => {
          await client.apply(template(w.ns, ['status-writes.banlieue.io/hold']));
          return `${w.ns}/small`;
        },
        when: (w) => client.delete(templateRef(w.ns)),
        then: async (w) => expect((await client.get(templateRef(w.ns)))?.status).toBeUndefined(),
      },
    ]);
  });

  describe('InfraCluster (the fake backend)', () => {
    const openClusters = (): Promise<World> =>
      open('sw-ic', FieldManager.controller, (caches, { api, ssa }) => ({
        reconciler: new InfraClusterReconciler(
          FakeClusterKind.kind,
          'fake',
          caches.watch<InfraCluster>(FakeClusterKind),
          caches.watch<Provider>(ProviderKind),
          api,
          ssa,
          systemClock,
        ),
      }));

    const clusterRef = (ns: string): Obj => ref(INFRA, FakeClusterKind.kind, 'work', ns);
    const cluster = (ns: string, metadata: Partial<Obj['metadata']> = {}): Obj => ({
      ...clusterRef(ns),
      metadata: { name: 'work', namespace: ns, ...metadata },
      spec: {},
    });
    const published = async (w: World, metadata: Partial<Obj['metadata']> = {}): Promise<string> => {
      await publishedLab(w.ns);
      await client.apply(cluster(w.ns, metadata));
      return `${w.ns}/work`;
    };
    const statusOf = async (ns: string): Promise<Record<string, unknown> | undefined> => (await client.get(clusterRef(ns)))?.status;

    statusWriteTable(openClusters, [
      {
        name: "a new cluster: its Provider's failure domain published",
        given: (w) => published(w),
        then: async (w) => expect((await statusOf(w.ns))?.failureDomains).toEqual([expect.objectContaining({ name: ZONE })]),
      },
      {
        name: 'no Provider yet',
        given: async (w) => {
          await client.apply(cluster(w.ns));
          return `${w.ns}/work`;
        },
        then: async (w) => expect(conditionOf(await client.get(clusterRef(w.ns)), 'Ready')).toMatchObject({ status: 'False' }),
      },
      {
        name: 'its Provider publishes one more failure domain',
        given: async (w) => {
          const key = await published(w);
          await w.driver.untilIdle(key);
          return key;
        },
        when: async (w) => void (await client.applyStatus(providerRef(w.ns), { failureDomains: [failureDomain(ZONE), failureDomain('lab-zone-2')] })),
        then: async (w) => expect((await statusOf(w.ns))?.failureDomains).toHaveLength(2),
      },
      {
        name: 'paused by its annotation',
        given: (w) => published(w, { annotations: { 'cluster.x-k8s.io/paused': '' } }),
        then: async (w) => expect(conditionOf(await client.get(clusterRef(w.ns)), 'Paused')).toMatchObject({ status: 'True' }),
      },
      {
        name: 'paused by its CAPI Cluster',
        given: async (w) => {
          await client.apply(capiCluster(w.ns, 'work', true));
          return published(w, { labels: { 'cluster.x-k8s.io/cluster-name': 'work' } });
        },
        then: async (w) => expect(conditionOf(await client.get(clusterRef(w.ns)), 'Paused')).toMatchObject({ status: 'True' }),
      },
    ]);
  });

  describe('CAPI machine placement (writes spec, never status)', () => {
    const openPlacement = (): Promise<World> =>
      open('sw-place', FieldManager.controller, (caches, { api, ssa }) => ({
        reconciler: new CapiMachinePlacementReconciler(
          FakeMachineKind.kind,
          caches.watch<InfraMachine>(FakeMachineKind),
          caches.watch<InfraCluster>(FakeClusterKind),
          api,
          ssa,
        ),
      }));

    /** A CAPI Machine `m` of Cluster `work` and its FakeMachine, without a failure domain; the FakeCluster publishing `zones`. */
    async function capiMachine(w: World, zones: string[]): Promise<string> {
      const clusterOwner = { apiVersion: CAPI, kind: 'Cluster', name: 'work', uid: '00000000-0000-4000-8000-000000000001', controller: true };
      await client.apply({
        ...ref(INFRA, FakeClusterKind.kind, 'work', w.ns),
        metadata: { name: 'work', namespace: w.ns, ownerReferences: [clusterOwner] },
        spec: {},
      } as Obj);
      if (zones.length) await client.applyStatus(ref(INFRA, FakeClusterKind.kind, 'work', w.ns), { failureDomains: zones.map((name) => ({ name })) });
      const owner = await client.apply({
        apiVersion: CAPI,
        kind: 'Machine',
        metadata: { name: 'm', namespace: w.ns },
        spec: {
          clusterName: 'work',
          bootstrap: { dataSecretName: 'm-bootstrap' },
          infrastructureRef: { apiGroup: 'infrastructure.banlieue.io', kind: FakeMachineKind.kind, name: 'm' },
        },
      });
      const ownedBy = { apiVersion: CAPI, kind: 'Machine', name: 'm', uid: owner.metadata.uid ?? '', controller: true };
      await client.apply(fakeMachine(w.ns, 'm', {}, { labels: { 'cluster.x-k8s.io/cluster-name': 'work' }, ownerReferences: [ownedBy] }));
      return `${w.ns}/m`;
    }

    const noStatusWritten = (counted: readonly Pass[]): void => expect(counted.reduce((n, p) => n + statusWrites(p.writes).length, 0)).toBe(0);

    statusWriteTable(openPlacement, [
      {
        name: 'a machine no CAPI Machine owns: nothing written',
        given: async (w) => {
          await client.apply(fakeMachine(w.ns, 'm'));
          return `${w.ns}/m`;
        },
        then: (_w, _key, counted) => expect(counted).toHaveLength(1),
      },
      {
        name: "a CAPI machine without a failure domain: one of its cluster's, in spec",
        given: (w) => capiMachine(w, ['zone-a', 'zone-b']),
        then: async (w, _key, counted) => {
          noStatusWritten(counted);
          expect(writesOf(counted[0], 'PATCH', '/fakemachines/m')).toHaveLength(1);
          expect((await client.get(machineRef(w.ns, 'm')))?.spec?.failureDomain).toMatch(/^zone-[ab]$/);
        },
      },
      {
        name: 'its cluster has published no failure domain yet: nothing written',
        given: (w) => capiMachine(w, []),
        then: (_w, _key, counted) => expect(counted).toHaveLength(1),
      },
    ]);
  });
});
