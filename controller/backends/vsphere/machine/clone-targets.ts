// Where a VSphereMachine is cloned from and to, resolved by name in the
// inventory: datacenter and cluster (spec, else the failure domain), resource
// pool, folder, datastore (a StoragePod resolves to its roomiest member), the
// port group of each NIC, and the template (a VM template, unless the Provider
// allows VMs). Unknown names are NotFound with the field in the message; read
// only when a clone is due.
import type { VSphereMachineSpec } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/vsphere-machine.js';
import { Reason } from '../../../../infra/api/conditions.js';
import { BackendError, BackendErrorKind } from '../../backend-error.js';
import type { ClusterInfo, DatacenterInfo, NetworkInfo } from '../client/inventory.js';
import type { ManagedObjectReference } from '../client/vim-types.js';
import type { NicTarget } from '../client/vm-specs.js';
import type { VsphereClient } from '../client/vsphere-client.js';
import { refKey } from '../client/wire-values.js';

export interface CloneTargets {
  readonly datacenter: DatacenterInfo;
  readonly cluster: ClusterInfo;
  readonly pool: ManagedObjectReference;
  readonly folder: ManagedObjectReference;
  /** Unset: the disks stay on the template's datastore. */
  readonly datastore: { readonly ref: ManagedObjectReference; readonly name: string } | undefined;
  readonly template: ManagedObjectReference;
  /** One per spec.network entry, in order. */
  readonly nics: readonly NicTarget[];
}

/** What a machine may clone, as its Provider's admin set it. */
export interface CloneSource {
  /** A VM that is not a template too (spec.vsphere.allowCloneFromVirtualMachines). */
  readonly virtualMachines: boolean;
}

/** The Provider field that lets machines clone VMs that are not templates. */
export const ALLOW_VMS_FIELD = 'spec.vsphere.allowCloneFromVirtualMachines';

/** What the machine's Provider lets it clone (its spec.vsphere): a VM only when the admin said so in so many words. */
export function cloneSourceOf(settings: Readonly<Record<string, unknown>> | undefined): CloneSource {
  return { virtualMachines: settings?.allowCloneFromVirtualMachines === true };
}

export async function resolveCloneTargets(
  client: VsphereClient,
  spec: VSphereMachineSpec,
  raw: Readonly<Record<string, string>>,
  source: CloneSource,
): Promise<CloneTargets> {
  const dcName = spec.datacenter ?? raw.datacenter;
  const clusterName = spec.cluster ?? raw.cluster;
  if (!dcName || !clusterName) {
    throw new BackendError(BackendErrorKind.Rejected, 'no datacenter/cluster: set spec.datacenter and spec.cluster, or a failure domain that has them');
  }
  const datacenters = await client.inventory.datacenters();
  const datacenter = datacenters.find((dc) => dc.name === dcName);
  if (!datacenter) throw notFound(`datacenter "${dcName}" (spec.datacenter)`);
  const cluster = (await client.inventory.clusters(datacenter.hostFolder)).find((c) => c.name === clusterName);
  if (!cluster) throw notFound(`cluster "${clusterName}" in datacenter ${dcName} (spec.cluster)`);
  return {
    datacenter,
    cluster,
    pool: await resolvePool(client, datacenter, cluster, spec.resourcePool, raw.resourcePool),
    folder: spec.folder ? await byPath(client, inventoryPath(datacenter, 'vm', spec.folder), `folder "${spec.folder}" (spec.folder)`) : datacenter.vmFolder,
    datastore: spec.datastore ? await resolveDatastore(client, datacenter, cluster, spec.datastore) : undefined,
    template: await resolveTemplate(client, datacenters, datacenter, spec, source),
    nics: await resolveNics(client, datacenter, cluster, spec.network ?? []),
  };
}

/** `<dc>/<root>/<path>` unless `path` already starts at a datacenter. */
function inventoryPath(dc: DatacenterInfo, root: 'vm' | 'host', path: string): string {
  const trimmed = path.replace(/^\/+|\/+$/g, '');
  return trimmed.startsWith(`${dc.name}/`) ? trimmed : `${dc.name}/${root}/${trimmed}`;
}

async function resolvePool(
  client: VsphereClient,
  dc: DatacenterInfo,
  cluster: ClusterInfo,
  wanted: string | undefined,
  rootName: string | undefined,
): Promise<ManagedObjectReference> {
  if (!wanted || wanted === rootName || wanted === 'Resources') return cluster.resourcePool;
  const path = wanted.includes('/') ? inventoryPath(dc, 'host', wanted) : `${dc.name}/host/${cluster.name}/Resources/${wanted}`;
  return byPath(client, path, `resource pool "${wanted}" (spec.resourcePool)`);
}

async function resolveDatastore(
  client: VsphereClient,
  dc: DatacenterInfo,
  cluster: ClusterInfo,
  name: string,
): Promise<{ ref: ManagedObjectReference; name: string }> {
  const reachable = new Set(cluster.datastores.map((r) => r.value));
  const datastores = (await client.inventory.datastores(dc.ref)).filter((ds) => reachable.has(ds.ref.value) && ds.accessible);
  const exact = datastores.find((ds) => ds.name === name);
  if (exact) return { ref: exact.ref, name: exact.name };
  // A datastore cluster: its member with the most free space (what SDRS would do first).
  const podNames = await client.inventory.names(datastores.flatMap((ds) => (ds.parent?.type === 'StoragePod' ? [ds.parent] : [])));
  const inPod = (ds: (typeof datastores)[number]): boolean => ds.parent?.type === 'StoragePod' && podNames.get(refKey(ds.parent)) === name;
  const members = datastores.filter(inPod).sort((a, b) => b.freeSpace - a.freeSpace);
  const [roomiest] = members;
  if (!roomiest) throw notFound(`datastore or datastore cluster "${name}" reachable from cluster ${cluster.name} (spec.datastore)`);
  return { ref: roomiest.ref, name: roomiest.name };
}

/**
 * spec.template: an inventory path (as VMImage rows resolve it, e.g.
 * `DC0/vm/templates/ubuntu`: one lookup), `<datacenter>/<name>`, or a name
 * (looked up in the target datacenter, then in every other); with
 * spec.templateFolder, `<dc>/vm/<templateFolder>/<name>`. Only a template,
 * whatever named it (a tenant, a VMImage row), unless the Provider allows VMs:
 * a clone of a VM boots a copy of its disks with the machine's user-data.
 */
async function resolveTemplate(
  client: VsphereClient,
  datacenters: readonly DatacenterInfo[],
  target: DatacenterInfo,
  spec: VSphereMachineSpec,
  source: CloneSource,
): Promise<ManagedObjectReference> {
  const found = await lookUpTemplate(client, datacenters, target, spec, source);
  if (found?.type === 'VirtualMachine' && (source.virtualMachines || (await client.vms.isTemplate(found)))) return found;
  // The same words whether there is no such VM or it is no template: the refusal tells nobody which VMs exist.
  const what = source.virtualMachines ? 'template or VM' : 'template';
  const optIn = source.virtualMachines ? '' : `; a VM that is not a template is cloned only where the Provider sets ${ALLOW_VMS_FIELD}`;
  throw new BackendError(BackendErrorKind.NotFound, `no ${what} "${spec.template}" (spec.template)${optIn}`, { reason: Reason.TemplateNotFound });
}

async function lookUpTemplate(
  client: VsphereClient,
  datacenters: readonly DatacenterInfo[],
  target: DatacenterInfo,
  spec: VSphereMachineSpec,
  source: CloneSource,
): Promise<ManagedObjectReference | undefined> {
  const named = (dc: DatacenterInfo, name: string): Promise<ManagedObjectReference | undefined> =>
    client.vms.findNamed(dc.vmFolder, name, { templatesOnly: !source.virtualMachines });
  if (spec.templateFolder) return client.search.findByInventoryPath(`${inventoryPath(target, 'vm', spec.templateFolder)}/${spec.template}`);
  if (spec.template.includes('/')) {
    const found = await client.search.findByInventoryPath(spec.template);
    if (found) return found;
    const [dcName, ...rest] = spec.template.split('/');
    const dc = datacenters.find((d) => d.name === dcName);
    return dc ? named(dc, rest.join('/')) : undefined;
  }
  for (const dc of [target, ...datacenters.filter((d) => d.name !== target.name)]) {
    const found = await named(dc, spec.template);
    if (found) return found;
  }
  return undefined;
}

async function resolveNics(
  client: VsphereClient,
  dc: DatacenterInfo,
  cluster: ClusterInfo,
  nics: NonNullable<VSphereMachineSpec['network']>,
): Promise<NicTarget[]> {
  if (nics.length === 0) return [];
  const reachable = new Set(cluster.networks.map((r) => r.value));
  const networks = (await client.inventory.networks(dc.ref)).filter((n) => reachable.has(n.ref.value));
  return nics.map((nic) =>
    toNicTarget(
      networks.find((n) => n.name === nic.portGroup),
      nic.portGroup,
      cluster.name,
    ),
  );
}

function toNicTarget(network: NetworkInfo | undefined, portGroup: string, cluster: string): NicTarget {
  if (!network) throw notFound(`port group "${portGroup}" reachable from cluster ${cluster} (spec.network[].portGroup)`);
  if (network.kind === 'distributed') return { kind: 'distributed', switchUuid: network.switchUuid, portgroupKey: network.portgroupKey };
  if (network.kind === 'opaque')
    throw new BackendError(BackendErrorKind.Rejected, `port group "${portGroup}" is an NSX opaque network, which banlieue does not attach yet`);
  return { kind: 'network', network: network.ref, deviceName: network.name };
}

async function byPath(client: VsphereClient, path: string, what: string): Promise<ManagedObjectReference> {
  const found = await client.search.findByInventoryPath(path);
  if (!found) throw notFound(`${what} at inventory path ${path}`);
  return found;
}

function notFound(what: string): BackendError {
  return new BackendError(BackendErrorKind.NotFound, `no ${what}`);
}
