// ClusterClass end to end, against the real CAPI manager with ClusterTopology
// on: a Cluster of a class over VSphereClusterTemplate and VSphereMachineTemplate
// provisions VMs in vcsim through `banlieue provider vsphere`; pointing the class
// at a new machine template rolls the MachineDeployment to new VMs, which needs
// CAPI's dry-run apply on the existing template to pass banlieue's template
// immutability policy. The control-plane and bootstrap providers are played by
// the test (played-providers.ts): their real ones need a workload cluster. The
// journey itself (capi-clusterclass-journey.ts) is every backend's; the
// Proxmox and libvirt cases run it in capi-proxmox.test.ts and capi-libvirt.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VsphereClient } from '../../controller/backends/vsphere/client/vsphere-client.js';
import { apiVersionOf } from '../../infra/api/kind.js';
import { vsphereApi } from '../../infra/api/infrastructure.banlieue.io/v1alpha1/vsphere-machine.js';
import { startVcsim, type Vcsim } from '../peers/vsphere/vcsim.js';
import { makeTemplate, uuidOf, vcsimClient, vsphereWorld } from '../support/vsphere/world.js';
import { waitFor } from '../support/wait.js';
import { clusterClassJourney, installPlayedProviders, KUBERNETES_VERSION, type ClusterClassJourney, type PeerVm } from './capi-clusterclass-journey.js';
import { topologyClass, topologyCluster } from './capi-clusterclass-objects.js';
import { kindEnvironment, localEnvironment, type CapiEnvironment } from './capi-environment.js';

const NS = 'capi-clusterclass';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('ClusterClass over banlieue templates (real CAPI manager with ClusterTopology, vcsim as vCenter)', () => {
  let env: CapiEnvironment;
  let vcsim: Vcsim;
  let client: VsphereClient;
  let journey: ClusterClassJourney;

  const get = async (kind: string, name: string): Promise<Json | undefined> =>
    env.kubectl(['get', kind, name, '-n', NS, '-o', 'json']).then(
      (o) => JSON.parse(o) as Json,
      () => undefined,
    );
  const apply = (obj: Json): Promise<string> => env.kubectl(['apply', '--server-side', '--field-manager=e2e', '-f', '-'], JSON.stringify(obj));
  /** The VM vcsim has under the providerID's BIOS UUID, with its memory. */
  const vmOf = async (providerID: string): Promise<PeerVm | undefined> => {
    const vm = await client.search.findVmByBiosUuid(uuidOf(providerID));
    if (!vm) return undefined;
    const content = await client.properties.retrieveOne(vm, ['config.hardware.memoryMB']);
    return { memoryMiB: Number(content.props.get('config.hardware.memoryMB')?.text) };
  };

  beforeAll(async () => {
    env = process.env.E2E_CAPI_ENV === 'kind' ? await kindEnvironment() : await localEnvironment();
    await installPlayedProviders(env);
    vcsim = await startVcsim({ datacenters: 1, clusters: 2 });
    client = await vcsimClient(vcsim);
    await makeTemplate(client, 'ubuntu-2404');
    await env.kubectl(['create', 'namespace', NS]);
    const world = vsphereWorld(NS, vcsim, 'clusterclass', 'ubuntu-2404');
    await apply(world.secret);
    await apply(world.provider);
    // The template its machines clone, published to them as an image by a VMImage.
    await apply(world.vmImage);
    await env.startProvider('vsphere', ['--namespace', NS, '--poll-period', '1', '--rediscover-period', '5']);
    await waitFor(
      'the Provider to discover vcsim',
      async () => ((await get('provider', 'vcsim'))?.status?.failureDomains?.length === 2 ? true : undefined),
      90_000,
    );
    journey = clusterClassJourney({
      env,
      ns: NS,
      backend: vsphereApi,
      clusterTemplateSpec: { providerRefs: [{ name: 'vcsim' }] },
      workerSpec: (memoryMiB) => ({ template: 'ubuntu-2404', numCpus: 1, memoryMiB, network: [{ name: 'eth0', portGroup: 'VM Network' }] }),
      vmOf,
      endpoint: { host: '192.0.2.70', port: 6443 },
    });
  }, 600_000);

  afterAll(async () => {
    await env?.stop();
    await client?.close();
    await vcsim?.stop();
  });

  it('provisions a Cluster of the class: CAPI creates the VSphereCluster and the MachineDeployment, banlieue the VMs', async () => {
    await journey.provision();
  }, 400_000);

  it("rolls the MachineDeployment to new VMs when the class names a new machine template: CAPI's dry run on the old template is admitted", async () => {
    await journey.rollToNewTemplate();
  }, 400_000);

  // A class's patches are written by CAPI's topology controller, which may read every Secret: a patch
  // naming a Secret on a banlieue machine template has no author to check, so the template is refused
  // (docs/adr/0025) and no machine, let alone a VM, gets that Secret's bytes.
  it("refuses the machine template CAPI's topology controller generates when a class patch names a Secret: no machine reads it", async () => {
    const className = 'banlieue-vsphere-secret-patch';
    await apply({
      apiVersion: apiVersionOf(vsphereApi.machineTemplate),
      kind: vsphereApi.machineTemplate.kind,
      metadata: { name: 'worker-patched', namespace: NS },
      spec: { template: { spec: { template: 'ubuntu-2404', numCpus: 1, memoryMiB: 512, network: [{ name: 'eth0', portGroup: 'VM Network' }] } } },
    });
    const klass = topologyClass(NS, className, {
      backend: vsphereApi,
      clusterTemplate: 'vsphere',
      controlPlaneTemplate: 'control-plane',
      bootstrapTemplate: 'worker',
      workerTemplate: 'worker-patched',
      maxUnavailable: 1,
    });
    (klass.spec as Json).patches.push({
      name: 'admin-secret-as-user-data',
      definitions: [
        {
          selector: {
            apiVersion: apiVersionOf(vsphereApi.machineTemplate),
            kind: vsphereApi.machineTemplate.kind,
            matchResources: { machineDeploymentClass: { names: ['worker'] } },
          },
          jsonPatches: [{ op: 'add', path: '/spec/template/spec/userDataSecretRef', value: { name: 'vcsim-creds' } }],
        },
      ],
    });
    await apply(klass);
    await waitFor(
      'the patched ClusterClass to be reconciled',
      async () => {
        const c = await get('clusterclass', className);
        return c?.status?.observedGeneration === c?.metadata.generation ? c : undefined;
      },
      120_000,
    );
    await apply(topologyCluster(NS, 'secret-patch', { className, version: KUBERNETES_VERSION, workers: 1, endpoint: { host: '192.0.2.71', port: 6443 } }));
    // The refusal, as CAPI's manager met it when it created the template.
    await waitFor(
      "banlieue's refusal in CAPI's log",
      async () => (env.capiLogs().includes("is generated by CAPI's topology controller") ? true : undefined),
      180_000,
    );
    const templates = JSON.parse(await env.kubectl(['get', 'vspheremachinetemplates', '-n', NS, '-o', 'json'])) as { items: Json[] };
    expect(templates.items.filter((t) => t.spec?.template?.spec?.userDataSecretRef !== undefined)).toEqual([]);
    const machines = JSON.parse(await env.kubectl(['get', 'vspheremachines', '-n', NS, '-l', 'cluster.x-k8s.io/cluster-name=secret-patch', '-o', 'json'])) as {
      items: Json[];
    };
    expect(machines.items).toEqual([]);
  }, 400_000);
});
