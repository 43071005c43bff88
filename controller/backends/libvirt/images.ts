// VMImage rows of a libvirt Provider (upstream-backends §3.2). A BackingFile
// source names a volume already on the host: `pool/volume`, or a volume name
// looked for in the pools the Provider's storage classes target (every active
// pool when it declares none). Its row resolves to `pool/volume`, which
// becomes the machines' bootSource.volume: their OS disks are overlays on it.
// Importing Url sources into a pool is not in this version.
import type { Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { ImageSource } from '../../../infra/api/banlieue.io/v1alpha1/vm-image.js';
import { Reason } from '../../../infra/api/conditions.js';
import { BackendErrorKind, isBackendError } from '../backend-error.js';
import type { ImageResolution } from '../backend.js';
import type { LibvirtClient } from './client/libvirt-client.js';

/** virConnectListAllStoragePoolsFlags ACTIVE. */
const ACTIVE = 2;

export async function resolveImage(client: LibvirtClient, provider: Provider, source: ImageSource): Promise<ImageResolution> {
  if (source.kind !== 'BackingFile') {
    return {
      ready: false,
      reason: Reason.UnsupportedSource,
      message: `libvirt images must be kind BackingFile (a volume in a storage pool) in this version, not ${source.kind}`,
    };
  }
  const slash = source.ref.indexOf('/');
  const pools = slash >= 0 ? [source.ref.slice(0, slash)] : await candidatePools(client, provider);
  const volume = slash >= 0 ? source.ref.slice(slash + 1) : source.ref;
  for (const name of pools) {
    if (await hasVolume(client, name, volume)) return { ready: true, resolvedRef: `${name}/${volume}` };
  }
  return {
    ready: false,
    reason: Reason.ImageSourceNotFound,
    message: `no volume "${volume}" in storage pool${pools.length === 1 ? '' : 's'} ${pools.map((p) => `"${p}"`).join(', ') || '(none active)'}`,
  };
}

/** The pools the storage classes target, in class order; every active pool when no class names one. */
async function candidatePools(client: LibvirtClient, provider: Provider): Promise<string[]> {
  const classes = provider.spec.capabilities?.storageClasses ?? [];
  const targeted = classes
    .flatMap((c) => [c.target?.pool, ...(c.perZone ?? []).map((z) => z.target.pool)])
    .filter((p): p is string => p !== undefined && p !== '');
  if (targeted.length > 0) return [...new Set(targeted)];
  return (await client.pools.list(ACTIVE)).map((p) => p.name);
}

async function hasVolume(client: LibvirtClient, poolName: string, volume: string): Promise<boolean> {
  try {
    await client.volumes.lookupByName(await client.pools.lookupByName(poolName), volume);
    return true;
  } catch (err) {
    if (isBackendError(err, BackendErrorKind.NotFound)) return false;
    throw err;
  }
}
