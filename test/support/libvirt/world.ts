// A small libvirt world for tests and benchmarks: the test driver's pool and
// network, an image volume in the pool, and the Provider/Secret/VMClass/VMImage
// a user would write to run machines on a private libvirtd reached over
// mutual TLS. No vitest here: the bench imports it too.
import { LibvirtClient, type LibvirtClientOptions } from '../../../controller/backends/libvirt/client/libvirt-client.js';
import type { StoragePool } from '../../../controller/backends/libvirt/client/handles.js';
import { LOOPBACK, type Libvirtd } from '../../peers/libvirt/libvirtd.js';
import type { Obj } from '../fixtures.js';

const CORE = 'banlieue.io/v1alpha1';

/** The test driver's built-in pool and network (test:///default). */
export const TEST_POOL = 'default-pool';
export const TEST_NETWORK = 'default';
/** The image every machine's OS disk is an overlay on. */
export const IMAGE_VOLUME = 'debian-12-genericcloud.qcow2';

export interface LibvirtWorld {
  readonly secret: Obj;
  readonly provider: Obj;
  readonly vmClass: Obj;
  readonly vmImage: Obj;
}

/**
 * The test driver's anchor connection over the daemon's unix socket. `keepalive: false` for an
 * anchor that must outlast a frozen daemon (a keepalive timeout would close it, and the test
 * driver's state with the last connection).
 */
export function anchorClient(daemon: Libvirtd, options: Pick<LibvirtClientOptions, 'keepalive'> = {}): Promise<LibvirtClient> {
  return LibvirtClient.connect({ uri: `test+unix:///default?socket=${daemon.socketPath}`, ...options });
}

/** What a user writes to run VMs on the test daemon, reached over mutual TLS. */
export function libvirtWorld(ns: string, daemon: Libvirtd, suffix: string): LibvirtWorld {
  return {
    secret: {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'libvirt-creds', namespace: ns },
      type: 'kubernetes.io/tls',
      stringData: { 'tls.crt': daemon.client.certPem, 'tls.key': daemon.client.keyPem },
    } as Obj,
    provider: {
      apiVersion: CORE,
      kind: 'Provider',
      metadata: { name: 'kvm1', namespace: ns, labels: { backend: 'libvirt' } },
      spec: {
        providerClassRef: { name: 'libvirt' },
        connection: {
          endpoint: `test+tls://${LOOPBACK}:${daemon.tlsPort}/default`,
          credentialsRef: { name: 'libvirt-creds' },
          caBundle: { inline: daemon.pki.caPem },
        },
        capabilities: {
          storageClasses: [{ name: 'fast', target: { pool: TEST_POOL } }],
          networkClasses: [{ name: 'lan', target: { network: TEST_NETWORK } }],
        },
      },
    },
    vmClass: {
      apiVersion: CORE,
      kind: 'VMClass',
      metadata: { name: `libvirt-small-${suffix}` },
      spec: {
        hardware: {
          cpus: 2,
          memoryMiB: 1024,
          disks: [
            { name: 'os', sizeGiB: 2, storageClass: 'fast' },
            { name: 'data', sizeGiB: 1, storageClass: 'fast' },
          ],
        },
        network: { interfaces: [{ name: 'eth0', networkClass: 'lan' }] },
      },
    },
    vmImage: {
      apiVersion: CORE,
      kind: 'VMImage',
      metadata: { name: `libvirt-debian-${suffix}` },
      spec: {
        osFamily: 'linux',
        osDistribution: 'debian',
        osVersion: '12',
        architecture: 'amd64',
        sources: [{ providerClass: 'libvirt', kind: 'BackingFile', ref: IMAGE_VOLUME }],
      },
    },
  };
}

/**
 * A 1 GiB qcow2 image volume in the test pool, as an image pipeline would leave it. (The test
 * driver's pool holds 100 GiB and counts every volume at its full capacity: small disks keep
 * twenty machines in it.)
 */
export async function makeImageVolume(anchor: LibvirtClient, pool: StoragePool, name = IMAGE_VOLUME): Promise<void> {
  await anchor.volumes.create(
    pool,
    `<volume><name>${name}</name><capacity unit='bytes'>${1024 ** 3}</capacity><target><format type='qcow2'/></target></volume>`,
  );
}
