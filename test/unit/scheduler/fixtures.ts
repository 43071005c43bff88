// Builders for the scheduler tests: realistic objects with the defaults a
// test does not care about. A vSphere Provider "vcenter-a" with three failure
// domains, two of them in datacenter dc1, and an image ready on it.
import type { BackendName } from '../../../infra/api/backends.js';
import type {
  Feature,
  FailureDomainStatus,
  NetworkClassCapability,
  Provider,
  StorageClassCapability,
} from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { VirtualMachine, VirtualMachineSpec } from '../../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import type { VMClass, VMClassSpec } from '../../../infra/api/banlieue.io/v1alpha1/vm-class.js';
import type { PerProviderImageStatus } from '../../../infra/api/banlieue.io/v1alpha1/vm-image.js';
import type { ScheduleInput } from '../../../controller/scheduler/schedule.js';
import { connection, vmImage } from '../../support/backend-samples.js';

export const NS = 'team-a';

export interface FailureDomainProps {
  readonly labels?: Record<string, string>;
  readonly raw?: Record<string, string>;
  /** @default ['fast', 'standard'] */
  readonly storage?: string[];
  /** @default ['prod', 'backup'] */
  readonly networks?: string[];
  /** @default ['efiSecureBoot', 'vtpm'] */
  readonly features?: Feature[];
}

export function failureDomain(name: string, props: FailureDomainProps = {}): FailureDomainStatus {
  return {
    name,
    labels: { name, ...props.labels },
    attributes: {
      availableStorageClasses: props.storage ?? ['fast', 'standard'],
      availableNetworkClasses: props.networks ?? ['prod', 'backup'],
      features: props.features ?? ['efiSecureBoot', 'vtpm'],
      ...(props.raw ? { raw: props.raw } : {}),
    },
  };
}

/** A vSphere failure domain `<provider>-<datacenter>-<cluster>`, labelled and located like the vSphere provider publishes it. */
export function vsphereDomain(provider: string, datacenter: string, cluster: string, props: FailureDomainProps = {}): FailureDomainStatus {
  return failureDomain(`${provider}-${datacenter}-${cluster}`, {
    ...props,
    labels: { datacenter, cluster, ...props.labels },
    raw: { datacenter, cluster, resourcePool: `/${datacenter}/host/${cluster}/Resources`, ...props.raw },
  });
}

export const STORAGE_CLASSES: StorageClassCapability[] = [
  { name: 'fast', target: { datastore: 'ds-ssd' }, perZone: [{ datacenter: 'dc2', target: { datastore: 'ds-dc2-ssd' } }] },
  { name: 'standard', target: { datastore: 'ds-hdd' } },
];

export const NETWORK_CLASSES: NetworkClassCapability[] = [
  { name: 'prod', target: { portGroup: 'pg-prod' } },
  { name: 'backup', target: { distributedPortGroup: 'dvpg-backup' } },
];

export interface ProviderProps {
  /** @default 'vsphere' */
  readonly backend?: BackendName;
  readonly labels?: Record<string, string>;
  readonly paused?: boolean;
  /** @default the three vSphere domains dc1-c1, dc1-c2, dc2-c1 of this Provider */
  readonly failureDomains?: FailureDomainStatus[];
}

export function provider(name: string, props: ProviderProps = {}): Provider {
  const backend = props.backend ?? 'vsphere';
  return {
    apiVersion: 'banlieue.io/v1alpha1',
    kind: 'Provider',
    metadata: { name, namespace: NS, labels: props.labels ?? {} },
    spec: {
      providerClassRef: { name: backend },
      connection: connection(backend, `${name}-credentials`),
      capabilities: { storageClasses: STORAGE_CLASSES, networkClasses: NETWORK_CLASSES, features: ['efiSecureBoot', 'vtpm'] },
      ...(props.paused !== undefined ? { paused: props.paused } : {}),
    },
    status: { failureDomains: props.failureDomains ?? defaultDomains(name) },
  };
}

function defaultDomains(provider: string): FailureDomainStatus[] {
  return [vsphereDomain(provider, 'dc1', 'c1'), vsphereDomain(provider, 'dc1', 'c2'), vsphereDomain(provider, 'dc2', 'c1')];
}

export interface VMClassProps {
  /** Storage class of each disk; the first is the OS disk. @default ['fast'] */
  readonly disks?: string[];
  /** Network class of each interface. @default ['prod'] */
  readonly interfaces?: string[];
  readonly firmware?: VMClassSpec['firmware'];
  readonly features?: Feature[];
}

export function vmClass(name: string, props: VMClassProps = {}): VMClass {
  return {
    apiVersion: 'banlieue.io/v1alpha1',
    kind: 'VMClass',
    metadata: { name },
    spec: {
      hardware: {
        cpus: 2,
        memoryMiB: 4096,
        disks: (props.disks ?? ['fast']).map((storageClass, i) => ({ name: i === 0 ? 'os' : `data${i}`, sizeGiB: 40, storageClass })),
      },
      network: { interfaces: (props.interfaces ?? ['prod']).map((networkClass, i) => ({ name: `eth${i}`, networkClass })) },
      ...(props.firmware ? { firmware: props.firmware } : {}),
      ...(props.features ? { features: props.features } : {}),
    },
  };
}

/** A ready perProvider row, as `provider`'s workload writes it. */
export function readyRow(provider: Provider): PerProviderImageStatus {
  return { providerNamespace: NS, providerName: provider.metadata.name ?? '', ready: true, resolvedRef: '/dc1/vm/templates/ubuntu-24.04' };
}

export interface VirtualMachineProps {
  readonly labels?: Record<string, string>;
  readonly placement?: VirtualMachineSpec['placement'];
  /** Where the VM already runs: Provider and failure-domain names. */
  readonly scheduledOn?: readonly [string, string];
}

export function virtualMachine(name: string, props: VirtualMachineProps = {}): VirtualMachine {
  return {
    apiVersion: 'banlieue.io/v1alpha1',
    kind: 'VirtualMachine',
    metadata: { name, namespace: NS, labels: props.labels ?? {} },
    spec: {
      classRef: { name: 'standard' },
      imageRef: { name: 'ubuntu-24.04' },
      ...(props.placement ? { placement: props.placement } : {}),
    },
    ...(props.scheduledOn
      ? { status: { scheduled: { providerName: props.scheduledOn[0], providerClass: 'vsphere' as const, failureDomain: props.scheduledOn[1] } } }
      : {}),
  };
}

/** The default world: VM "web-2" in team-a, Provider vcenter-a, the image ready on it; `overrides` replace parts. */
export function scheduleInput(overrides: Partial<ScheduleInput> = {}): ScheduleInput {
  const providers = overrides.providers ?? [provider('vcenter-a')];
  return {
    vm: virtualMachine('web-2', { labels: { app: 'web' } }),
    vmClass: vmClass('standard'),
    image: vmImage('ubuntu-24.04', { rows: providers.map(readyRow) }),
    providers,
    siblings: [],
    ...overrides,
  };
}
