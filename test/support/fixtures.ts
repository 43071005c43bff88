// Objects for integration tests, built as a user (or a provider) would write
// them, and applied through the real API server.
import { type BackendName } from '../../infra/api/backends.js';
import { KubeApi } from '../../controller/runtime/kube-api.js';
import { ServerSideApply } from '../../controller/runtime/server-side-apply.js';
import { BACKEND_SAMPLES, connection, vmImage as sampleImage } from './backend-samples.js';
import { testKubeConfig } from './kube.js';
import { waitFor } from './wait.js';

export const CORE = 'banlieue.io/v1alpha1';
export const INFRA = 'infrastructure.banlieue.io/v1alpha1';

export interface Obj {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    generation?: number;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    finalizers?: string[];
    deletionTimestamp?: string;
    ownerReferences?: { kind: string; name: string; controller?: boolean }[];
    uid?: string;
  };
  spec?: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  status?: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

/** A condition as the API server shows it. */
export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

/** The object's Ready condition, if it has one. */
export const readyOf = (o: Obj | undefined): Condition | undefined => (o?.status?.conditions as Condition[] | undefined)?.find((c) => c.type === 'Ready');

/** A test's view of the API: apply as a user, write status as a provider, read back. */
export class TestApi {
  readonly api = new KubeApi(testKubeConfig());
  private readonly user = new ServerSideApply(this.api, 'banlieue-test');
  private readonly provider = new ServerSideApply(this.api, 'banlieue-test-provider');

  apply(obj: Obj): Promise<Obj> {
    return this.user.apply(obj);
  }

  /** Status as a provider role writes it (its own field manager). */
  applyStatus(obj: Obj, status: Record<string, unknown>): Promise<Obj> {
    return this.provider.apply(
      {
        apiVersion: obj.apiVersion,
        kind: obj.kind,
        metadata: { name: obj.metadata.name, ...(obj.metadata.namespace !== undefined ? { namespace: obj.metadata.namespace } : {}) },
        status,
      },
      { subresource: 'status' },
    );
  }

  async get(obj: Pick<Obj, 'apiVersion' | 'kind' | 'metadata'>): Promise<Obj | undefined> {
    return this.api.get<Obj>(obj).catch((err: { code?: number }) => {
      if (err.code === 404) return undefined;
      throw err;
    });
  }

  async patch(obj: Pick<Obj, 'apiVersion' | 'kind' | 'metadata'>, patch: unknown, contentType = 'application/merge-patch+json'): Promise<Obj> {
    return this.api.request<Obj>('PATCH', await this.api.pathOf(obj), { body: patch, contentType });
  }

  async delete(obj: Pick<Obj, 'apiVersion' | 'kind' | 'metadata'>): Promise<void> {
    await this.api.request('DELETE', await this.api.pathOf(obj)).catch((err: { code?: number }) => {
      if (err.code !== 404) throw err;
    });
  }

  /** Delete every VirtualMachine of `ns` and wait until each is gone (run while the roles that take their finalizers off still run). */
  async deleteVirtualMachines(ns: string, timeoutMs = 120_000): Promise<void> {
    const vms = (await this.api.request<{ items: Obj[] }>('GET', `/apis/${CORE}/namespaces/${ns}/virtualmachines`)).items;
    await Promise.all(vms.map((v) => this.delete(v)));
    await Promise.all(vms.map((v) => this.gone(v, timeoutMs)));
  }

  /** Wait until `obj` has condition `type` with `status` (and `reason`); returns the object. */
  condition(obj: Pick<Obj, 'apiVersion' | 'kind' | 'metadata'>, type: string, status: string, reason?: string, timeoutMs = 30_000): Promise<Obj> {
    return waitFor(
      `${obj.kind} ${obj.metadata.name} ${type}=${status}${reason ? `/${reason}` : ''}`,
      async () => {
        const live = await this.get(obj);
        const c = (live?.status?.conditions as { type: string; status: string; reason: string }[] | undefined)?.find((x) => x.type === type);
        return c && c.status === status && (!reason || c.reason === reason) ? live : undefined;
      },
      timeoutMs,
    );
  }

  /** Wait until the object exists (and `check` holds). */
  exists(obj: Pick<Obj, 'apiVersion' | 'kind' | 'metadata'>, check: (o: Obj) => boolean = () => true, timeoutMs = 30_000): Promise<Obj> {
    return waitFor(
      `${obj.kind} ${obj.metadata.name}`,
      async () => {
        const live = await this.get(obj);
        return live && check(live) ? live : undefined;
      },
      timeoutMs,
    );
  }

  gone(obj: Pick<Obj, 'apiVersion' | 'kind' | 'metadata'>, timeoutMs = 30_000): Promise<true> {
    return waitFor(`${obj.kind} ${obj.metadata.name} to be gone`, async () => ((await this.get(obj)) ? undefined : true), timeoutMs);
  }
}

export interface FailureDomainInput {
  name: string;
  labels?: Record<string, string>;
  storage?: string[];
  networks?: string[];
  features?: string[];
  raw?: Record<string, string>;
}

/** A Provider of `backend` with storage classes fast and slow and network class lan, under the backend's target keys. */
export function provider(ns: string, name: string, backend: BackendName, labels: Record<string, string> = {}): Obj {
  const { storage, network } = BACKEND_SAMPLES[backend];
  return {
    apiVersion: CORE,
    kind: 'Provider',
    metadata: { name, namespace: ns, labels },
    spec: {
      providerClassRef: { name: backend },
      connection: connection(backend, 'creds'),
      capabilities: {
        storageClasses: [
          { name: 'fast', target: { [storage.key]: 'fast-store' } },
          { name: 'slow', target: { [storage.key]: 'slow-store' } },
        ],
        networkClasses: [{ name: 'lan', target: { [network.key]: 'lan-net' } }],
      },
    },
  };
}

export function failureDomains(backend: BackendName, fds: FailureDomainInput[]): Record<string, unknown> {
  return {
    failureDomains: fds.map((fd) => ({
      name: fd.name,
      labels: { name: fd.name, ...fd.labels },
      attributes: {
        availableStorageClasses: fd.storage ?? ['fast', 'slow'],
        availableNetworkClasses: fd.networks ?? ['lan'],
        ...(fd.features ? { features: fd.features } : {}),
        raw: { ...BACKEND_SAMPLES[backend].raw(fd.name), ...fd.raw },
      },
    })),
  };
}

export function vmClass(name: string, extra: Record<string, unknown> = {}): Obj {
  return {
    apiVersion: CORE,
    kind: 'VMClass',
    metadata: { name },
    spec: {
      hardware: { cpus: 2, memoryMiB: 2048, disks: [{ name: 'os', sizeGiB: 20, storageClass: 'fast' }] },
      network: { interfaces: [{ name: 'eth0', networkClass: 'lan' }] },
      ...extra,
    },
  };
}

/** A VMImage with every backend's sample source, as a user applies it (no status). */
export function vmImage(name: string): Obj {
  return { ...sampleImage(name), metadata: { name } };
}

export function imageRows(rows: { ns: string; provider: string; ready: boolean; reason?: string }[]): Record<string, unknown> {
  return {
    perProvider: rows.map((r) => ({
      providerNamespace: r.ns,
      providerName: r.provider,
      ready: r.ready,
      ...(r.reason ? { reason: r.reason, message: `not ready: ${r.reason}` } : {}),
    })),
  };
}

export function vm(ns: string, name: string, cls: string, image: string, spec: Record<string, unknown> = {}, labels: Record<string, string> = {}): Obj {
  return {
    apiVersion: CORE,
    kind: 'VirtualMachine',
    metadata: { name, namespace: ns, labels },
    spec: { classRef: { name: cls }, imageRef: { name: image }, ...spec },
  };
}

export function machineRef(backend: BackendName, ns: string, name: string): Pick<Obj, 'apiVersion' | 'kind' | 'metadata'> {
  return { apiVersion: INFRA, kind: BACKEND_SAMPLES[backend].machineKind, metadata: { name, namespace: ns } };
}

/** A provider's answer for a running machine. */
export function runningStatus(address: string): Record<string, unknown> {
  return {
    initialization: { provisioned: true },
    observedPowerState: 'PoweredOn',
    addresses: [{ type: 'InternalIP', address }],
    conditions: [{ type: 'Ready', status: 'True', reason: 'Reconciled', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' }],
  };
}
