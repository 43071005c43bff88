// `make demo`: banlieue on a real local control plane. Builds the tools,
// starts etcd + kube-apiserver + kube-controller-manager on loopback, installs
// banlieue with `banlieue bootstrap operator`, runs `banlieue controller`,
// applies the examples and shows what a user sees, then stops everything.
// Until the provider roles run here, the demo publishes what they would
// (failure domains, image readiness), clearly marked as such.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { main as banlieue } from '../../controller/cli/main.js';
import { buildTools, ControlPlane } from './control-plane.js';
import { startRole, type RoleProcess } from './controller-process.js';
import { waitFor } from './wait.js';

/** What `banlieue provider vsphere` publishes after walking the inventory. */
async function publishVsphereInventory(cp: ControlPlane): Promise<void> {
  const fd = (cluster: string): Record<string, unknown> => ({
    name: `vsphere-dc1-${cluster}`,
    labels: { name: `vsphere-dc1-${cluster}`, datacenter: 'dc1', cluster },
    attributes: {
      availableStorageClasses: ['standard', 'fast'],
      availableNetworkClasses: ['lan', 'servers'],
      // The provider passes its declared features through.
      features: ['efiSecureBoot', 'vtpm', 'hotAddCPU', 'hotAddMemory'],
      raw: { datacenter: 'dc1', cluster, resourcePool: `/dc1/host/${cluster}/Resources` },
    },
  });
  const status = JSON.stringify({ status: { failureDomains: [fd('compute-01'), fd('compute-02')] } });
  await cp.kubectl(['patch', 'provider', 'vsphere', '-n', 'vms', '--subresource=status', '--type=merge', '-p', status]);
  const row = JSON.stringify({ status: { perProvider: [{ providerNamespace: 'vms', providerName: 'vsphere', ready: true, resolvedRef: 'ubuntu-24.04' }] } });
  await cp.kubectl(['patch', 'vmimage', 'ubuntu-24.04', '--subresource=status', '--type=merge', '-p', row]);
}

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
let controller: RoleProcess | undefined;
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

  say('banlieue controller (a local process, as with `make dev-cluster`)');
  controller = await startRole(['controller', '--kubeconfig', cp.kubeconfigPath, '--no-leader-elect']);

  say('Standing in for the vSphere provider role: publishing two failure domains and the image row');
  await publishVsphereInventory(cp);
  await waitFor('the vSphere VMs to be placed', async () => {
    const out = await cp.kubectl(['get', 'vsm', '-n', 'vms', '-o', 'name']);
    return ['web-01', 'db-01', 'pg-replica-1', 'pg-replica-2'].every((n) => out.includes(`/${n}\n`)) ? true : undefined;
  }, 60_000);

  say('kubectl get virtualmachines,vspheremachines -n vms -o wide');
  process.stdout.write(await cp.kubectl(['get', 'virtualmachines,vspheremachines', '-n', 'vms', '-o', 'wide']));
  say('kubectl get virtualmachine web-01 -n vms -o jsonpath={.status.conditions}');
  process.stdout.write(`${await cp.kubectl(['get', 'virtualmachine', 'web-01', '-n', 'vms', '-o', 'jsonpath={range .status.conditions[*]}{.type}={.status} ({.reason}) {.message}{"\\n"}{end}'])}`);
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
  await controller?.stop();
  await cp.stop();
  say('Control plane stopped (`make dev-cluster` keeps one running)');
}
process.exitCode = failed ? 1 : 0;
