// `make dev-cluster`: a real local control plane with banlieue's CRDs, in the
// foreground until interrupted. Run `banlieue controller --kubeconfig <path>`
// (or any kubectl) against it.
import { buildTools, ControlPlane } from './control-plane.js';
import { applyCrdsFromDist } from './crds.js';

const tools = await buildTools();
const cp = await ControlPlane.start(tools);
await applyCrdsFromDist(cp);
process.stdout.write(`# kube-apiserver ${tools.versions['kube-apiserver'] ?? ''} at ${cp.server}; data and logs in ${cp.dir}\n`);
process.stdout.write(`export KUBECONFIG=${cp.kubeconfigPath}\n`);

const shutdown = async (): Promise<void> => {
  process.stdout.write('# stopping the control plane\n');
  await cp.stop();
  process.exit(0);
};
process.once('SIGINT', () => void shutdown());
process.once('SIGTERM', () => void shutdown());
// Keep the event loop alive until a signal arrives.
setInterval(() => undefined, 1 << 30);
