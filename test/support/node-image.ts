// The Kubernetes node guest image (test/tools/node-image.sh), built or found
// in the tools cache, and the VMImage that publishes it. `make e2e-nodes` builds the image first; here it is only looked up
// (under a second when cached).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { CORE, type Obj } from './fixtures.js';

const run = promisify(execFile);
/** A cold image build downloads ~250 MB and may build kubelet and kubeadm first. */
const BUILD_TIMEOUT_MS = 30 * 60_000;

export interface NodeImage {
  /** qcow2, bootable by SeaBIOS (extlinux), usable as a backing file. */
  readonly disk: string;
  readonly kernel: string;
  readonly initrd: string;
}

export async function ensureNodeImage(): Promise<NodeImage> {
  const { stdout } = await run('test/tools/node-image.sh', [], { timeout: BUILD_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 });
  const [disk, kernel, initrd] = stdout.trim().split('\n').pop()?.split(' ') ?? [];
  if (!disk || !kernel || !initrd) throw new Error(`node-image.sh printed no "<disk> <vmlinuz> <initrd>" line: ${stdout}`);
  return { disk, kernel, initrd };
}

/** The VMImage publishing the node image as libvirt volume `ref` (a BackingFile in the TCG host's pool). */
export function nodeVmImage(suffix: string, ref: string): Obj {
  return {
    apiVersion: CORE,
    kind: 'VMImage',
    metadata: { name: `kubernetes-node-${suffix}` },
    spec: {
      osFamily: 'linux',
      osDistribution: 'debian',
      osVersion: '12',
      architecture: 'amd64',
      sources: [{ providerClass: 'libvirt', kind: 'BackingFile', ref }],
    },
  };
}
