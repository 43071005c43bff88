// A backend descriptor for tests: the same shape as a real backend's
// controller/backends/<name>/descriptor.ts, registered only by the tests
// that use it. It proves a backend plugs in through its folder alone.
import { BackendError, BackendErrorKind } from '../../../controller/backends/backend-error.js';
import type { Backend, EnsureResult, MachineRequest } from '../../../controller/backends/backend.js';
import type { BackendDescriptor } from '../../../controller/backends/descriptor.js';
import { singleStorageTarget } from '../../../controller/backends/machine-build.js';
import type { FailureDomainStatus, Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import { FakeMachineKind, fakeApi, type FakeMachine, type FakeMachineSpec } from './fake-machine.js';
import type { FakeCloud } from './fake-cloud.js';

/** The OS disk size of the class's first disk, as a real backend's machine carries it. */
function osDisk(disks: readonly { readonly sizeGiB: number }[]): Pick<FakeMachineSpec, 'osDiskSizeGiB'> {
  const [os] = disks;
  return os ? { osDiskSizeGiB: os.sizeGiB } : {};
}

/** One failure domain per Provider, offering every class the Provider declares. */
function discover(provider: Provider): FailureDomainStatus[] {
  const capabilities = provider.spec.capabilities;
  const name = `${provider.metadata.name ?? ''}-zone`;
  return [
    {
      name,
      labels: { name },
      attributes: {
        availableStorageClasses: (capabilities?.storageClasses ?? []).map((c) => c.name),
        availableNetworkClasses: (capabilities?.networkClasses ?? []).map((c) => c.name),
        raw: { zone: name },
      },
    },
  ];
}

/** The zone a request is placed in: its failure domain's raw.zone. */
const zoneOf = (request: MachineRequest<unknown>): string => request.raw.zone ?? '';

function ensure(cloud: FakeCloud, request: MachineRequest<FakeMachineSpec>, mayCreate: boolean): EnsureResult {
  const vm = cloud.find(request.uuid, zoneOf(request));
  if (!vm) {
    const done = request.taskRef === undefined ? undefined : cloud.taskDone(request.taskRef);
    if (done === false) return { state: 'InProgress', taskRef: request.taskRef ?? '', message: `creating (task ${request.taskRef ?? ''})`, actions: [] };
    if (done === true) throw new BackendError(BackendErrorKind.TaskFailed, `task ${request.taskRef ?? ''} ended without a VM`);
    if (!mayCreate) return { state: 'Absent' };
    const taskRef = cloud.startCreate({
      uuid: request.uuid,
      name: request.name,
      zone: zoneOf(request),
      cpus: request.spec.cpus,
      memoryMiB: request.spec.memoryMiB,
      userData: request.userData,
      ...(request.spec.network ? { network: request.spec.network } : {}),
    });
    return { state: 'InProgress', taskRef, message: `creating (task ${taskRef})`, actions: ['CreateStarted'] };
  }
  const desired = request.spec.desiredPowerState ?? 'PoweredOn';
  const actions = vm.powerState === desired ? [] : [desired === 'PoweredOn' ? ('PoweredOn' as const) : ('PoweredOff' as const)];
  vm.powerState = desired === 'Suspended' ? 'Suspended' : desired;
  // The guest reports its static address, else one it got by DHCP.
  const address = vm.network?.[0]?.ipam?.static?.address ?? `192.0.2.${(parseInt(request.uuid.slice(0, 2), 16) % 250) + 1}`;
  return {
    state: 'Present',
    observation: {
      ref: `fake-${vm.uuid}`,
      powerState: vm.powerState,
      addresses: vm.powerState === 'PoweredOn' ? [{ type: 'InternalIP', address }] : [],
      actions: request.taskRef ? ['Created', ...actions] : actions,
      statusFields: { vmRef: `fake-${vm.uuid}` },
    },
  };
}

function fakeBackend(cloud: FakeCloud): Backend<FakeMachineSpec> {
  return {
    discover: (provider) => Promise.resolve({ failureDomains: discover(provider) }),
    resolveImage: (_provider, _connection, source) => Promise.resolve({ ready: true, resolvedRef: source.ref }),
    machines: {
      ensure: (_connection, request, options) => Promise.resolve(ensure(cloud, request, options.mayCreate)),
      destroy: (_connection, request) => {
        const existed = cloud.destroy(request.uuid, zoneOf(request));
        return Promise.resolve(existed === undefined ? { state: 'InProgress', message: `destroying the fake VM ${request.uuid}` } : { state: 'Gone', existed });
      },
      // The fake cloud keeps no marks: a VM found is left to itself.
      release: (_connection, request) =>
        Promise.resolve(cloud.find(request.uuid, zoneOf(request)) ? { state: 'Released', ref: `fake-${request.uuid}` } : { state: 'Absent' }),
    },
    close: () => Promise.resolve(),
  };
}

export function fakeDescriptor(cloud: FakeCloud): BackendDescriptor<FakeMachineSpec> {
  return {
    api: fakeApi,
    buildMachine: (context) => {
      const storage = singleStorageTarget(context, 'a FakeMachine');
      if (!storage.ok) return storage;
      const object: FakeMachine = {
        apiVersion: context.apiVersion,
        kind: FakeMachineKind.kind,
        metadata: context.metadata,
        spec: {
          ...context.commonSpec,
          image: context.imageRef,
          cpus: context.hardware.cpus,
          memoryMiB: context.hardware.memoryMiB,
          ...osDisk(context.hardware.disks),
        },
      };
      return { ok: true, object };
    },
    // The fake kind carries no storage target (a zone holds its disks).
    carriedTargets: (spec) => ({ imageRef: spec.image }),
    namedTargets: () => [],
    machineCapacity: (spec) => ({ cpus: spec.cpus, memoryMiB: spec.memoryMiB, architecture: 'amd64' }),
    createBackend: () => fakeBackend(cloud),
  };
}
