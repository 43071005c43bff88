// The steps of `make demo` (test/support/demo.ts runs them in a process group
// of their own, stopped whole on any exit). Builds the tools it needs (not
// Cluster API's), starts etcd + kube-apiserver + kube-controller-manager on loopback, installs
// banlieue with `banlieue bootstrap operator`, runs `banlieue controller` and
// `banlieue provider vsphere` against vcsim (the govmomi vCenter simulator),
// applies the examples and shows what a user sees, then stops everything.
// The demo plays VMware Tools (each guest reports an IP); it runs no other
// backend's provider role (their examples point at hosts that do not exist
// here), so those machines stay unprovisioned.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { main as banlieue } from '../../controller/cli/main.js';
import type { ManagedObjectReference } from '../../controller/backends/vsphere/client/vim-types.js';
import type { VsphereClient } from '../../controller/backends/vsphere/client/vsphere-client.js';
import { toMoRef } from '../../controller/backends/vsphere/client/wire-values.js';
import { startVcsim, type Vcsim } from '../peers/vsphere/vcsim.js';
import { buildKubeTools, ControlPlane } from './control-plane.js';
import { startRole, type RoleProcess } from './controller-process.js';
import { stopGroupWithParent } from './process-group.js';
import { makeTemplate, playTools, uuidOf, vcsimClient } from './vsphere/world.js';
import { waitFor } from './wait.js';

const VSPHERE_VMS = ['web-01', 'db-01', 'pg-replica-1', 'pg-replica-2'];

/**
 * examples/providers/vsphere.yaml, pointed at vcsim: its endpoint, CA and
 * credentials, and the example's classes mapped onto vcsim's inventory names.
 */
function vcsimProvider(vcsim: Vcsim): string {
  const docs = [
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'vsphere-credentials', namespace: 'vms' },
      stringData: { username: vcsim.username, password: vcsim.password },
    },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'vsphere-ca', namespace: 'vms' }, data: { 'ca.crt': vcsim.caPem } },
    {
      apiVersion: 'banlieue.io/v1alpha1',
      kind: 'Provider',
      metadata: { name: 'vsphere', namespace: 'vms', labels: { 'banlieue.io/site': 'paris', 'banlieue.io/environment': 'production' } },
      spec: {
        providerClassRef: { name: 'vsphere' },
        connection: { endpoint: vcsim.url, credentialsRef: { name: 'vsphere-credentials' }, caBundle: { configMapRef: { name: 'vsphere-ca', key: 'ca.crt' } } },
        capabilities: {
          storageClasses: [
            { name: 'standard', target: { datastore: 'LocalDS_0' } },
            { name: 'fast', target: { datastore: 'LocalDS_1' } },
          ],
          networkClasses: [
            {
              name: 'lan',
              target: { distributedPortGroup: 'DC0_DVPG0' },
              subnet: { gateway: '192.0.2.1', nameservers: ['192.0.2.53'], domain: 'example.com' },
            },
            {
              name: 'servers',
              target: { distributedPortGroup: 'DC0_DVPG0' },
              subnet: { gateway: '198.51.100.1', nameservers: ['198.51.100.53'], domain: 'example.com' },
            },
            { name: 'mgmt', target: { portGroup: 'VM Network' } },
          ],
          features: ['efiSecureBoot', 'vtpm', 'hotAddCPU', 'hotAddMemory'],
        },
      },
    },
  ];
  return docs.map((d) => stringify(d)).join('---\n');
}

/** vcsim's DC0 / DC0_C0 / DC0_C1 renamed to the inventory the examples' selectors expect. */
async function nameLikeTheExamples(client: VsphereClient): Promise<void> {
  const rename = async (ref: ManagedObjectReference, newName: string): Promise<void> => {
    const task = (await client.session.invoke('Rename_Task', ref, { newName })).child('returnval');
    if (task) await client.tasks.wait(toMoRef(task));
  };
  const [dc] = await client.inventory.datacenters();
  if (!dc) throw new Error('vcsim has no datacenter');
  const clusters = await client.inventory.clusters(dc.hostFolder);
  for (const [i, cluster] of clusters.entries()) await rename(cluster.ref, `compute-0${i + 1}`);
  await rename(dc.ref, 'dc1');
}

/** VMware Tools' part: each vSphere guest reports its static address, or one "from DHCP". */
async function playToolsForAll(cp: ControlPlane, client: VsphereClient): Promise<void> {
  const list = JSON.parse(await cp.kubectl(['get', 'vspheremachines.infrastructure.banlieue.io', '-n', 'vms', '-o', 'json'])) as {
    items: { metadata: { name: string }; spec: { providerID?: string; network?: { ipam?: { static?: { address: string } } }[] } }[];
  };
  for (const [i, m] of list.items.entries()) {
    if (!m.spec.providerID) continue;
    const ip = m.spec.network?.[0]?.ipam?.static?.address ?? `192.0.2.${100 + i}`;
    await playTools(client, uuidOf(m.spec.providerID), ip);
  }
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

stopGroupWithParent();
const startedAt = Date.now();
const seconds = (since: number): string => `${Math.round((Date.now() - since) / 1000)} s`;
say('Building (or reusing, cached under ~/.cache/banlieue-tools) etcd, kube-apiserver, kube-controller-manager and kubectl; a cold build takes many minutes');
const tools = await buildKubeTools({ showProgress: true });
say(`Tools ready after ${seconds(startedAt)}; starting etcd, kube-apiserver and kube-controller-manager on 127.0.0.1`);
const cp = await ControlPlane.start(tools);
let failed = false;
let controller: RoleProcess | undefined;
let provider: RoleProcess | undefined;
let vcsim: Vcsim | undefined;
let client: VsphereClient | undefined;
try {
  say(`Control plane ready after ${seconds(startedAt)}: kube-apiserver ${tools.versions['kube-apiserver'] ?? ''} at ${cp.server}`);
  // --wait=false: this cluster has no nodes, so its Deployments never roll out; the roles run as local processes below.
  say('banlieue bootstrap operator --wait=false');
  const rc = await banlieue(['node', 'banlieue', 'bootstrap', 'operator', '--wait=false', '--kubeconfig', cp.kubeconfigPath]);
  if (rc !== 0) throw new Error(`bootstrap operator exited ${rc}`);

  say('Applying examples/ (namespace vms)');
  await cp.kubectl(['create', 'namespace', 'vms']);
  // CAPI kinds (Cluster, MachineDeployment, ...) need Cluster API installed; skip those files here.
  const files = yamlFiles('examples').filter((f) => !f.includes('cluster-api'));
  process.stdout.write(await cp.kubectl(['apply', '--server-side', '--field-manager=banlieue-demo', ...files.flatMap((f) => ['-f', f])]));

  say('banlieue controller (a local process, as with `make dev-cluster`)');
  controller = await startRole(['controller', '--kubeconfig', cp.kubeconfigPath, '--no-leader-elect']);

  say('vcsim (built or reused) as the vCenter: datacenter dc1 with clusters compute-01 and compute-02, a template ubuntu-2404-cloudimg');
  vcsim = await startVcsim({ datacenters: 1, clusters: 2 });
  client = await vcsimClient(vcsim);
  await makeTemplate(client, 'ubuntu-2404-cloudimg');
  await nameLikeTheExamples(client);
  say('Pointing examples/providers/vsphere.yaml at vcsim (endpoint, CA, credentials, class targets)');
  process.stdout.write(await cp.kubectl(['apply', '--server-side', '--field-manager=banlieue-demo', '-f', '-'], vcsimProvider(vcsim)));

  say('banlieue provider vsphere: discovers failure domains, finds the template, clones the VMs');
  provider = await startRole(['provider', 'vsphere', '--kubeconfig', cp.kubeconfigPath, '--no-leader-elect', '--poll-period', '2']);
  const vcsimClientNow = client;
  await waitFor(
    'the vSphere VMs to be Ready (the demo plays VMware Tools)',
    async () => {
      await playToolsForAll(cp, vcsimClientNow);
      const out = await cp.kubectl([
        'get',
        'virtualmachines.banlieue.io',
        '-n',
        'vms',
        '-o',
        'jsonpath={range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Ready")].status}{"\\n"}{end}',
      ]);
      return VSPHERE_VMS.every((n) => out.includes(`${n}=True`)) ? true : undefined;
    },
    180_000,
  );

  say(`Every vSphere VM Ready after ${seconds(startedAt)}. kubectl get virtualmachines.banlieue.io,vspheremachines.infrastructure.banlieue.io -n vms -o wide`);
  process.stdout.write(await cp.kubectl(['get', 'virtualmachines.banlieue.io,vspheremachines.infrastructure.banlieue.io', '-n', 'vms', '-o', 'wide']));
  say('kubectl get bvm web-01 -n vms -o jsonpath={.status.conditions}');
  process.stdout.write(
    `${await cp.kubectl(['get', 'bvm', 'web-01', '-n', 'vms', '-o', 'jsonpath={range .status.conditions[*]}{.type}={.status} ({.reason}) {.message}{"\\n"}{end}'])}`,
  );
  say('What vCenter (vcsim) now holds');
  const [dc] = await vcsimClientNow.inventory.datacenters();
  for (const v of dc ? await vcsimClientNow.vms.list(dc.vmFolder) : []) {
    if (VSPHERE_VMS.includes(v.name)) process.stdout.write(`${v.name}\tBIOS UUID ${v.uuid ?? ''}\t${v.powerState}\t${v.ipAddress ?? ''}\n`);
  }
  say('examples/infrastructure/vsphere-machine.yaml names folders and port groups vcsim lacks: its condition says which');
  process.stdout.write(
    `${await cp.kubectl(['get', 'bvsm', 'legacy-app-01', '-n', 'vms', '-o', 'jsonpath={range .status.conditions[?(@.type=="Ready")]}Ready={.status} ({.reason}) {.message}{"\\n"}{end}'])}`,
  );
  say('kubectl delete bvm web-01 -n vms: the VM is powered off and destroyed in vCenter');
  await cp.kubectl(['delete', 'bvm', 'web-01', '-n', 'vms', '--timeout=60s']);
  const left = dc ? (await vcsimClientNow.vms.list(dc.vmFolder)).map((v) => v.name) : [];
  process.stdout.write(`web-01 in vCenter: ${left.includes('web-01') ? 'still there' : 'gone'}\n`);
  say('kubectl get banlieue -A');
  process.stdout.write(await cp.kubectl(['get', 'banlieue', '-A']));
  say('kubectl explain virtualmachines.banlieue.io.spec.placement');
  process.stdout.write(await cp.kubectl(['explain', 'virtualmachines.banlieue.io.spec.placement']));
  say('An invalid object is refused with the field named');
  await cp
    .kubectl(
      ['apply', '-f', '-'],
      'apiVersion: banlieue.io/v1alpha1\nkind: VMClass\nmetadata: {name: broken}\nspec: {hardware: {cpus: 0, memoryMiB: 64, disks: []}, network: {interfaces: []}}\n',
    )
    .then(
      () => {
        throw new Error('the invalid VMClass was accepted');
      },
      (err: Error) => process.stdout.write(`${err.message}\n`),
    );
} catch (err) {
  failed = true;
  process.stderr.write(`demo failed: ${err instanceof Error ? err.message : String(err)}\n`);
  // What a user would look at next: where each VM stands, and why.
  const state = await cp
    .kubectl([
      'get',
      'virtualmachines.banlieue.io,vspheremachines.infrastructure.banlieue.io',
      '-n',
      'vms',
      '-o',
      'jsonpath={range .items[*]}{.kind}/{.metadata.name}: {range .status.conditions[?(@.type=="Ready")]}Ready={.status} ({.reason}) {.message}{end}{"\\n"}{end}',
    ])
    .catch(() => '');
  process.stderr.write(state);
} finally {
  await provider?.stop();
  await controller?.stop();
  await client?.close();
  await vcsim?.stop();
  await cp.stop();
  say('Control plane stopped (`make dev-cluster` keeps one running)');
}
process.exitCode = failed ? 1 : 0;
