// A private libvirt host (qemu-host.ts) that banlieue's libvirt provider drives
// as a Provider of QEMU/TCG guests (KVM guests hang on the test machines): a
// directory pool holding one image, as a host's image pipeline would leave it,
// the guests' libvirt network, and the Provider objects whose classes target
// them (`local` storage, `lan` network).
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Network, StoragePool } from '../../../controller/backends/libvirt/client/handles.js';
import { LibvirtClient } from '../../../controller/backends/libvirt/client/libvirt-client.js';
import { GUEST_LIBVIRT_NETWORK, guestLibvirtNetworkXml, startQemuHost, type QemuHost } from '../../peers/libvirt/qemu-host.js';
import { CORE, type Obj } from '../fixtures.js';

export interface TcgHost {
  readonly host: QemuHost;
  readonly client: LibvirtClient;
  readonly pool: StoragePool;
  /** The guests' libvirt network: its dnsmasq's leases are the provider's address source. */
  readonly network: Network;
}

/** The host, its pool `pool` holding `image.file` as volume `image.name`, and the guests' network. */
export async function startTcgHost(pool: string, image: { readonly file: string; readonly name: string }): Promise<TcgHost> {
  const host = await startQemuHost();
  const client = await LibvirtClient.connect({ uri: host.uri });
  // The image in the pool's directory before the pool exists: the pool finds it at start.
  const dir = join(host.dir, 'pool');
  mkdirSync(dir);
  copyFileSync(image.file, join(dir, image.name));
  const created = await client.pools.createTransient(`<pool type='dir'><name>${pool}</name><target><path>${dir}</path></target></pool>`);
  const network = await client.networks.createTransient(guestLibvirtNetworkXml());
  return { host, client, pool: created, network };
}

/** The Provider `tcg-host` of namespace `ns` on `host` (and its empty credentials Secret), its classes targeting `pool` and the guests' network. */
export function tcgProviderObjects(ns: string, host: QemuHost, pool: string): Obj[] {
  return [
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'host-creds', namespace: ns }, stringData: {} },
    {
      apiVersion: CORE,
      kind: 'Provider',
      metadata: { name: 'tcg-host', namespace: ns },
      spec: {
        providerClassRef: { name: 'libvirt' },
        connection: { endpoint: host.uri, credentialsRef: { name: 'host-creds' } },
        libvirt: { domainType: 'qemu' },
        capabilities: {
          storageClasses: [{ name: 'local', target: { pool } }],
          networkClasses: [{ name: 'lan', target: { network: GUEST_LIBVIRT_NETWORK.name } }],
        },
      },
    },
  ] as Obj[];
}
