// The Kubernetes node guest image (test/tools/node-image.sh) and the kubeadm
// it carries (test/tools/build.sh node), each built or found in the tools
// cache. `make e2e-nodes` builds the image first; here it is only looked up
// (under a second when cached).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

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

/** The kubeadm binary the image holds (same version), for the control plane's kubeadm phases. */
export async function nodeKubeadm(): Promise<string> {
  const { stdout } = await run('test/tools/build.sh', ['node'], { timeout: BUILD_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 });
  const line = stdout.split('\n').find((l) => l.startsWith('kubeadm '));
  const path = line?.split(' ')[2];
  if (!path) throw new Error(`test/tools/build.sh node named no kubeadm: ${stdout}`);
  return path;
}
