// ClusterClass end to end, against the real CAPI manager with ClusterTopology
// on: a Cluster of a class over VSphereClusterTemplate and VSphereMachineTemplate
// provisions VMs in vcsim through `banlieue provider vsphere`; pointing the class
// at a new machine template rolls the MachineDeployment to new VMs, which needs
// CAPI's dry-run apply on the existing template to pass banlieue's template
// immutability policy. The control-plane and bootstrap providers are played by
// the test (played-providers.ts): their real ones need a workload cluster. The
// journey itself (capi-clusterclass-journey.ts) is every backend's; the
// Proxmox and libvirt cases run it in capi-proxmox.test.ts and capi-libvirt.test.ts.
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { VsphereClient } from '../../controller/backends/vsphere/client/vsphere-client.js';
import { vsphereApi } from '../../infra/api/infrastructure.banlieue.io/v1alpha1/vsphere-machine.js';
import { startVcsim, type Vcsim } from '../peers/vsphere/vcsim.js';
import { makeTemplate, uuidOf, vcsimClient, vsphereWorld } from '../support/vsphere/world.js';
import { waitFor } from '../support/wait.js';
import { clusterClassJourney, installPlayedProviders, type ClusterClassJourney, type PeerVm } from './capi-clusterclass-journey.js';
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
});
