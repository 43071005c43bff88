// `make demo`: banlieue on a real local control plane. Builds the tools,
// starts etcd + kube-apiserver + kube-controller-manager on loopback, installs
// banlieue with `banlieue bootstrap operator`, applies the examples and shows
// what a user sees, then stops everything.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { main as banlieue } from '../../controller/cli/main.js';
import { buildTools, ControlPlane } from './control-plane.js';

const say = (text: string): void => void process.stdout.write(`\n== ${text}\n`);

function yamlFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((f) => {
      const p = join(dir, f);
      if (statSync(p).isDirectory()) return yamlFiles(p);
      return p.endsWith('.yaml') ? [p] : [];
    });
}

say('Building (or reusing) kube-apiserver, etcd, kube-controller-manager and kubectl');
const tools = await buildTools();
const cp = await ControlPlane.start(tools);
let failed = false;
try {
  say(`Control plane ready: kube-apiserver ${tools.versions['kube-apiserver'] ?? ''} at ${cp.server}`);
  say('banlieue bootstrap operator');
  const rc = await banlieue(['node', 'banlieue', 'bootstrap', 'operator', '--kubeconfig', cp.kubeconfigPath]);
  if (rc !== 0) throw new Error(`bootstrap operator exited ${rc}`);

  say('Applying examples/ (namespace vms)');
  await cp.kubectl(['create', 'namespace', 'vms']);
  // CAPI kinds (Cluster, MachineDeployment, ...) need Cluster API installed; skip those files here.
  const files = yamlFiles('examples').filter((f) => !f.includes('cluster-api'));
  process.stdout.write(await cp.kubectl(['apply', '--server-side', '--field-manager=banlieue-demo', ...files.flatMap((f) => ['-f', f])]));

  say('kubectl get banlieue -A');
  process.stdout.write(await cp.kubectl(['get', 'banlieue', '-A']));
  say('kubectl explain virtualmachine.spec.placement');
  process.stdout.write(await cp.kubectl(['explain', 'virtualmachine.spec.placement']));
  say('An invalid object is refused with the field named');
  await cp
    .kubectl(['apply', '-f', '-'], 'apiVersion: banlieue.io/v1alpha1\nkind: VMClass\nmetadata: {name: broken}\nspec: {hardware: {cpus: 0, memoryMiB: 64, disks: []}, network: {interfaces: []}}\n')
    .then(
      () => {
        throw new Error('the invalid VMClass was accepted');
      },
      (err: Error) => process.stdout.write(`${err.message}\n`),
    );
} catch (err) {
  failed = true;
  process.stderr.write(`demo failed: ${err instanceof Error ? err.message : String(err)}\n`);
} finally {
  await cp.stop();
  say('Control plane stopped (`make dev-cluster` keeps one running)');
}
process.exitCode = failed ? 1 : 0;
