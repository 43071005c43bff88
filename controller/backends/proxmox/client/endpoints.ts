// The PVE API calls banlieue makes, each as the schema names it: method, path
// template (also the metrics label), every parameter (path ones included) and
// what it returns. Hand-written for the subset; test/unit/backends/proxmox/
// schema.test.ts checks each one against the schema file (wire-types.ts says why).
import { Type, type TNull, type TObject, type TSchema, type TString, type TUnion } from '@sinclair/typebox';
import {
  ClusterResource,
  ClusterStatusEntry,
  GuestInterfaces,
  NetworkEntry,
  NodeEntry,
  NodeStatus,
  QemuConfig,
  QemuConfigKeys,
  QemuEntry,
  QemuStatus,
  StorageEntry,
  StorageStatus,
  StorageVolume,
  TaskLogLine,
  TaskStatus,
  VersionInfo,
} from './wire-types.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface Endpoint<P extends TObject = TObject, R extends TSchema = TSchema> {
  readonly method: HttpMethod;
  /** The schema's path, e.g. `/nodes/{node}/qemu/{vmid}/config`. */
  readonly path: string;
  /** Every parameter as PVE names and types it; `{name}` ones go into the path. */
  readonly params: P;
  readonly returns: R;
}

function endpoint<P extends TObject, R extends TSchema>(method: HttpMethod, path: string, params: P, returns: R): Endpoint<P, R> {
  return { method, path, params, returns };
}

const opt = Type.Optional;
const node = Type.String();
const vmid = Type.Integer();
/** A task started: its UPID. */
const upid: TString = Type.String();
/** A UPID when PVE started a task, null when it did the change at once. */
const upidOrNull: TUnion<[TString, TNull]> = Type.Union([Type.String(), Type.Null()]);
const vmPath = { node, vmid };

/** `/cluster/resources?type=`: what to list. */
export const ResourceFilter = Type.Union([Type.Literal('vm'), Type.Literal('storage'), Type.Literal('node'), Type.Literal('sdn')]);

/** Parameters of config POST (async) and PUT (sync): the keys banlieue sets, plus the edit controls. */
const configParams = {
  ...vmPath,
  ...QemuConfigKeys,
  /** Comma-separated keys to remove. */
  delete: opt(Type.String()),
  /** Refuse the change when the config's digest differs (someone else changed it). */
  digest: opt(Type.String()),
};

export const Endpoints = {
  version: endpoint('GET', '/version', Type.Object({}), VersionInfo),
  nodes: endpoint('GET', '/nodes', Type.Object({}), Type.Array(NodeEntry)),
  nodeStatus: endpoint('GET', '/nodes/{node}/status', Type.Object({ node }), NodeStatus),
  clusterStatus: endpoint('GET', '/cluster/status', Type.Object({}), Type.Array(ClusterStatusEntry)),
  clusterResources: endpoint('GET', '/cluster/resources', Type.Object({ type: opt(ResourceFilter) }), Type.Array(ClusterResource)),
  /** With `vmid`: asserts that id is free (400 when it is taken) and returns it. */
  nextId: endpoint('GET', '/cluster/nextid', Type.Object({ vmid: opt(vmid) }), Type.Integer()),

  storages: endpoint(
    'GET',
    '/nodes/{node}/storage',
    Type.Object({ node, content: opt(Type.String()), enabled: opt(Type.Boolean()), storage: opt(Type.String()) }),
    Type.Array(StorageEntry),
  ),
  storageStatus: endpoint('GET', '/nodes/{node}/storage/{storage}/status', Type.Object({ node, storage: Type.String() }), StorageStatus),
  storageContent: endpoint(
    'GET',
    '/nodes/{node}/storage/{storage}/content',
    Type.Object({ node, storage: Type.String(), content: opt(Type.String()), vmid: opt(vmid) }),
    Type.Array(StorageVolume),
  ),
  deleteVolume: endpoint(
    'DELETE',
    '/nodes/{node}/storage/{storage}/content/{volume}',
    Type.Object({ node, storage: Type.String(), volume: Type.String() }),
    upidOrNull,
  ),
  /** Multipart: `content` and the file, whose part name is `filename` (pveproxy turns it into `filename` + `tmpfilename`). */
  upload: endpoint(
    'POST',
    '/nodes/{node}/storage/{storage}/upload',
    Type.Object({
      node,
      storage: Type.String(),
      content: Type.Union([Type.Literal('iso'), Type.Literal('vztmpl'), Type.Literal('import')]),
      filename: Type.String(),
      checksum: opt(Type.String()),
      'checksum-algorithm': opt(Type.Union([Type.Literal('md5'), Type.Literal('sha1'), Type.Literal('sha256'), Type.Literal('sha512')])),
    }),
    upid,
  ),
  networks: endpoint(
    'GET',
    '/nodes/{node}/network',
    Type.Object({ node, type: opt(Type.Union([Type.Literal('bridge'), Type.Literal('any_bridge'), Type.Literal('any_local_bridge'), Type.Literal('vlan')])) }),
    Type.Array(NetworkEntry),
  ),

  qemuList: endpoint('GET', '/nodes/{node}/qemu', Type.Object({ node, full: opt(Type.Boolean()) }), Type.Array(QemuEntry)),
  qemuConfig: endpoint('GET', '/nodes/{node}/qemu/{vmid}/config', Type.Object({ ...vmPath, current: opt(Type.Boolean()) }), QemuConfig),
  /** Async config change: may start a task (disk allocation) and return its UPID. */
  qemuConfigAsync: endpoint('POST', '/nodes/{node}/qemu/{vmid}/config', Type.Object({ ...configParams, background_delay: opt(Type.Integer()) }), upidOrNull),
  /** Sync config change: done when it returns. */
  qemuConfigSync: endpoint('PUT', '/nodes/{node}/qemu/{vmid}/config', Type.Object(configParams), Type.Null()),
  qemuClone: endpoint(
    'POST',
    '/nodes/{node}/qemu/{vmid}/clone',
    Type.Object({
      ...vmPath,
      newid: vmid,
      name: opt(Type.String()),
      description: opt(Type.String()),
      target: opt(Type.String()),
      storage: opt(Type.String()),
      full: opt(Type.Boolean()),
      format: opt(Type.Union([Type.Literal('raw'), Type.Literal('qcow2'), Type.Literal('vmdk')])),
      pool: opt(Type.String()),
      snapname: opt(Type.String()),
      bwlimit: opt(Type.Integer()),
    }),
    upid,
  ),
  /** `size`: `+<n>G` grows by n, `<n>G` sets it (never shrinks). Returns a UPID on PVE 8+. */
  qemuResize: endpoint(
    'PUT',
    '/nodes/{node}/qemu/{vmid}/resize',
    Type.Object({ ...vmPath, disk: Type.String(), size: Type.String(), digest: opt(Type.String()), skiplock: opt(Type.Boolean()) }),
    upid,
  ),
  qemuStatus: endpoint('GET', '/nodes/{node}/qemu/{vmid}/status/current', Type.Object(vmPath), QemuStatus),
  qemuStart: endpoint('POST', '/nodes/{node}/qemu/{vmid}/status/start', Type.Object({ ...vmPath, timeout: opt(Type.Integer()) }), upid),
  /** Hard stop (pulls the plug); `overrule-shutdown` aborts a running shutdown task first. */
  qemuStop: endpoint(
    'POST',
    '/nodes/{node}/qemu/{vmid}/status/stop',
    Type.Object({ ...vmPath, timeout: opt(Type.Integer()), 'overrule-shutdown': opt(Type.Boolean()) }),
    upid,
  ),
  /** ACPI shutdown; the task fails after `timeout` s unless `forceStop`. */
  qemuShutdown: endpoint(
    'POST',
    '/nodes/{node}/qemu/{vmid}/status/shutdown',
    Type.Object({ ...vmPath, timeout: opt(Type.Integer()), forceStop: opt(Type.Boolean()) }),
    upid,
  ),
  qemuSuspend: endpoint('POST', '/nodes/{node}/qemu/{vmid}/status/suspend', Type.Object({ ...vmPath, todisk: opt(Type.Boolean()) }), upid),
  qemuResume: endpoint('POST', '/nodes/{node}/qemu/{vmid}/status/resume', Type.Object(vmPath), upid),
  qemuDelete: endpoint(
    'DELETE',
    '/nodes/{node}/qemu/{vmid}',
    Type.Object({ ...vmPath, purge: opt(Type.Boolean()), 'destroy-unreferenced-disks': opt(Type.Boolean()), skiplock: opt(Type.Boolean()) }),
    upid,
  ),
  agentInterfaces: endpoint('GET', '/nodes/{node}/qemu/{vmid}/agent/network-get-interfaces', Type.Object(vmPath), GuestInterfaces),

  taskStatus: endpoint('GET', '/nodes/{node}/tasks/{upid}/status', Type.Object({ node, upid: Type.String() }), TaskStatus),
  /** `limit` lines from line `start` (0-based); PVE's default is the first 50. */
  taskLog: endpoint(
    'GET',
    '/nodes/{node}/tasks/{upid}/log',
    Type.Object({ node, upid: Type.String(), start: opt(Type.Integer()), limit: opt(Type.Integer()) }),
    Type.Array(TaskLogLine),
  ),
} as const;

export type EndpointName = keyof typeof Endpoints;
