// The Cluster API v1beta2 contract, against the real CAPI manager and the real
// clusterctl: a CAPI Cluster, Machine and MachineDeployment work with
// banlieue's infrastructure kinds, through RBAC that is really enforced.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { waitFor } from '../support/wait.js';
import type { VsphereClient } from '../../controller/backends/vsphere/client/vsphere-client.js';
import { startVcsim, type Vcsim } from '../peers/vsphere/vcsim.js';
import { makeTemplate, playTools, uuidOf, vcsimClient, vmsNamed, vsphereWorld } from '../support/vsphere/world.js';
import { kindEnvironment, localEnvironment, type CapiEnvironment } from './capi-environment.js';
import { capiCluster, capiMachine, workersDeployment } from './capi-objects.js';
import { machineWithInvalidVersion } from './capi-webhooks.js';

const INFRA = 'infrastructure.banlieue.io/v1alpha1';
const GROUP = 'infrastructure.banlieue.io';

interface Kinds {
  backend: string;
  cluster: string;
  machine: string;
  template: string;
  machineSpec: Record<string, unknown>;
  providerID: string;
}

const KINDS: Kinds[] = [
  {
    backend: 'vsphere',
    cluster: 'VSphereCluster',
    machine: 'VSphereMachine',
    template: 'VSphereMachineTemplate',
    machineSpec: { template: 'ubuntu', numCpus: 2, memoryMiB: 4096 },
    providerID: 'vsphere://4211a1b2-1111-2222-3333-444455556666',
  },
  {
    backend: 'proxmox',
    cluster: 'ProxmoxCluster',
    machine: 'ProxmoxMachine',
    template: 'ProxmoxMachineTemplate',
    machineSpec: { templateVmid: 9000, cores: 2, memoryMiB: 4096, osDiskSizeGiB: 20, nics: [{ name: 'net0', bridge: 'vmbr0' }] },
    providerID: 'proxmox://4211a1b2-1111-2222-3333-444455556666',
  },
  {
    backend: 'libvirt',
    cluster: 'LibvirtCluster',
    machine: 'LibvirtMachine',
    template: 'LibvirtMachineTemplate',
    machineSpec: {
      pool: 'default',
      bootSource: { kind: 'backingVolume', volume: 'ubuntu.qcow2' },
      vcpus: 2,
      memoryMiB: 4096,
      disks: [{ name: 'os', sizeGiB: 20 }],
    },
    providerID: 'libvirt://4211a1b2-1111-2222-3333-444455556666',
  },
  {
    backend: 'cloud-hypervisor',
    cluster: 'CloudHypervisorCluster',
    machine: 'CloudHypervisorMachine',
    template: 'CloudHypervisorMachineTemplate',
    machineSpec: { bootSource: { kind: 'image', image: 'ubuntu.raw' }, cpus: { boot: 2 }, memory: { sizeMiB: 4096 }, osDiskSizeGiB: 20, storageClass: 'local' },
    providerID: 'cloudhypervisor://4211a1b2-1111-2222-3333-444455556666',
  },
];

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('Cluster API v1beta2 contract', () => {
  let env: CapiEnvironment;
  /** The object, or undefined when the API server says NotFound; any other failure throws (no test passes on a failed read). */
  const get = async (kind: string, ns: string, name: string): Promise<Json | undefined> =>
    env.kubectl(['get', kind, name, '-n', ns, '-o', 'json']).then(
      (o) => JSON.parse(o) as Json,
      (err: Error) => {
        if (/\(NotFound\)/.test(err.message)) return undefined;
        throw err;
      },
    );
  const apply = (obj: Json, fieldManager = 'e2e'): Promise<string> =>
    env.kubectl(['apply', '--server-side', `--field-manager=${fieldManager}`, '-f', '-'], JSON.stringify(obj));

  beforeAll(async () => {
    env = process.env.E2E_CAPI_ENV === 'kind' ? await kindEnvironment() : await localEnvironment();
    // The e2e log names what it ran against.
    process.stdout.write(`Cluster API manager ${env.versions.capi}; clusterctl ${env.versions.clusterctl}\n`);
  }, 600_000);

  afterAll(async () => {
    await env?.stop();
  });

  it('runs the real CAPI manager and clusterctl of the pinned release', () => {
    expect(env.versions.capi).toMatch(/^v1\.14\.\d+$/);
    expect(env.versions.clusterctl).toMatch(/^v1\.14\.\d+$/);
  });

  it('aggregates our infrastructure rules, and nothing of banlieue.io, into the CAPI manager role', async () => {
    const aggregated = JSON.parse(await env.kubectl(['get', 'clusterrole', 'capi-aggregated-manager-role', '-o', 'json'])) as Json;
    const rules = aggregated.rules as { apiGroups: string[]; resources: string[]; verbs: string[] }[];
    const ours = rules.find((r) => r.apiGroups.includes(GROUP) && r.resources.includes('vsphereclusters'));
    expect(ours?.verbs).toEqual(['get', 'list', 'watch', 'create', 'update', 'patch', 'delete']);
    expect(ours?.resources).toEqual(expect.arrayContaining(['vspheremachines/status', 'proxmoxmachinetemplates', 'cloudhypervisorclustertemplates']));
    expect(rules.some((r) => r.apiGroups.includes('banlieue.io'))).toBe(false);
    const controllerRole = JSON.parse(await env.kubectl(['get', 'clusterrole', 'banlieue-controller', '-o', 'json'])) as Json;
    expect(Object.keys(controllerRole.metadata.labels ?? {})).not.toContain('cluster.x-k8s.io/aggregate-to-manager');
  });

  // Served by the CAPI manager itself (capi-webhooks.ts locally, cert-manager on
  // kind): what it defaults, refuses and converts is CAPI's, not the test's.
  describe("CAPI's own webhooks", () => {
    const ns = 'capi-webhooks';
    /** The object as the API server would store it, admission and conversion included, without storing it. */
    const dryRunCreate = async (obj: Json): Promise<Json> =>
      JSON.parse(await env.kubectl(['create', '--dry-run=server', '-o', 'json', '-f', '-'], JSON.stringify(obj))) as Json;
    /** The API server's refusal of `obj`, or undefined when it takes it. */
    const refusal = (obj: Json): Promise<string | undefined> =>
      dryRunCreate(obj).then(
        () => undefined,
        (err: Error) => err.message,
      );

    beforeAll(async () => {
      await env.kubectl(['create', 'namespace', ns]);
    });

    it('defaults a MachineDeployment written without strategy, selector or labels: rolling update, surge 1, and the cluster and deployment labels', async () => {
      const md = await dryRunCreate(workersDeployment(ns, 'work', 1, 'VSphereMachineTemplate'));
      expect(md.spec.rollout.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } });
      const labels = { 'cluster.x-k8s.io/cluster-name': 'work', 'cluster.x-k8s.io/deployment-name': 'workers' };
      expect(md.spec.selector.matchLabels).toEqual(labels);
      expect(md.spec.template.metadata.labels).toEqual(labels);
      expect(md.metadata.labels['cluster.x-k8s.io/cluster-name']).toBe('work');
    });

    it("sets a Machine's cluster-name label from spec.clusterName, over the label its author wrote", async () => {
      const machine = await dryRunCreate(
        capiMachine(ns, 'labelled', {
          cluster: 'work',
          infraKind: 'VSphereMachine',
          failureDomain: 'fd-1',
          labels: { 'cluster.x-k8s.io/cluster-name': 'other' },
        }),
      );
      expect(machine.metadata.labels['cluster.x-k8s.io/cluster-name']).toBe('work');
    });

    // A webhook's Invalid answer reaches the client as the webhook wrote it; "vnot-a-version" is the defaulting webhook's.
    it("refuses a Machine whose version is not semantic, with CAPI's message", async () => {
      expect(await refusal(machineWithInvalidVersion(ns, 'bad-version'))).toMatch(
        /The Machine "bad-version" is invalid: spec\.version: Invalid value: "vnot-a-version": must be a valid semantic version/,
      );
    });

    it("refuses a ClusterClass that declares a variable named builtin (CAPI's reserved name)", async () => {
      const ref = (kind: string): Json => ({ templateRef: { apiVersion: `${GROUP}/v1alpha1`, kind, name: 'any' } });
      const worker = {
        class: 'worker',
        bootstrap: { templateRef: { apiVersion: 'bootstrap.cluster.x-k8s.io/v1beta2', kind: 'KubeadmConfigTemplate', name: 'any' } },
        infrastructure: ref('VSphereMachineTemplate'),
      };
      const clusterClass = {
        apiVersion: 'cluster.x-k8s.io/v1beta2',
        kind: 'ClusterClass',
        metadata: { name: 'reserved', namespace: ns },
        spec: {
          infrastructure: ref('VSphereClusterTemplate'),
          controlPlane: { templateRef: { apiVersion: 'controlplane.cluster.x-k8s.io/v1beta2', kind: 'KubeadmControlPlaneTemplate', name: 'any' } },
          workers: { machineDeployments: [worker] },
          variables: [{ name: 'builtin', required: false, schema: { openAPIV3Schema: { type: 'string' } } }],
        },
      };
      expect(await refusal(clusterClass)).toMatch(
        /The ClusterClass "reserved" is invalid: spec\.variables\[builtin\]\.name: Invalid value: "builtin": "builtin" is a reserved variable name/,
      );
    });

    it('refuses a topology Cluster whose version is not semantic', async () => {
      const cluster = {
        apiVersion: 'cluster.x-k8s.io/v1beta2',
        kind: 'Cluster',
        metadata: { name: 'bad-topology', namespace: ns },
        spec: { topology: { classRef: { name: 'absent' }, version: 'not-a-version' } },
      };
      expect(await refusal(cluster)).toMatch(
        /The Cluster "bad-topology" is invalid: spec\.topology\.version: Invalid value: "vnot-a-version": version must be a valid semantic version/,
      );
    });

    it('serves v1beta1 through its conversion webhook: a v1beta1 Machine keeps its infrastructureRef.apiVersion', async () => {
      const machine = await dryRunCreate({
        apiVersion: 'cluster.x-k8s.io/v1beta1',
        kind: 'Machine',
        metadata: { name: 'old-api', namespace: ns },
        spec: {
          clusterName: 'work',
          version: 'v1.35.4',
          bootstrap: { dataSecretName: 'old-api-bootstrap' },
          infrastructureRef: { apiVersion: INFRA, kind: 'VSphereMachine', name: 'old-api' },
        },
      });
      expect(machine.apiVersion).toBe('cluster.x-k8s.io/v1beta1');
      expect(machine.spec.infrastructureRef).toMatchObject({ apiVersion: INFRA, kind: 'VSphereMachine', name: 'old-api' });
    });
  });

  // The Providers here publish failure domains and the machines report their
  // status because the test writes both, playing the provider role: these
  // cases are the CAPI manager and banlieue's controller against a simulated
  // provider. The provider roles themselves run below (vSphere on vcsim) and
  // in capi-proxmox.test.ts and capi-libvirt.test.ts; Cloud Hypervisor's
  // host-run provider has no contract case yet.
  describe.each(KINDS)('with $cluster and $machine (provider simulated)', (k) => {
    const ns = `capi-${k.backend}`;
    const provider = (name: string): Json => ({
      apiVersion: 'banlieue.io/v1alpha1',
      kind: 'Provider',
      metadata: { name, namespace: ns },
      spec: {
        providerClassRef: { name: k.backend },
        connection:
          k.backend === 'cloud-hypervisor'
            ? { endpoint: 'unix:///run/banlieue' }
            : { endpoint: k.backend === 'libvirt' ? 'qemu+tls://kvm.example.com/system' : 'https://backend.example.com', credentialsRef: { name: 'creds' } },
      },
    });

    beforeAll(async () => {
      await env.kubectl(['create', 'namespace', ns]);
      for (const p of ['site-a', 'site-b']) {
        await apply(provider(p));
        const fds = ['fd-1', 'fd-2', 'fd-3'].map((fd) => ({ name: `${p}-${fd}`, labels: { name: `${p}-${fd}`, site: p } }));
        await env.kubectl([
          'patch',
          'provider',
          p,
          '-n',
          ns,
          '--subresource=status',
          '--type=merge',
          '-p',
          JSON.stringify({ status: { failureDomains: fds } }),
        ]);
      }
    });

    it('provisions the Cluster infrastructure from the failure domains the simulated Providers publish: ownerRef, six failure domains, endpoint', async () => {
      await apply({
        apiVersion: INFRA,
        kind: k.cluster,
        metadata: { name: 'work', namespace: ns },
        spec: {
          controlPlaneEndpoint: { host: '192.0.2.10', port: 6443 },
          providerRefs: [{ name: 'site-a' }, { name: 'site-b' }],
          controlPlaneFailureDomainSelector: { matchLabels: { site: 'site-a' } },
        },
      });
      await apply(capiCluster(ns, 'work', k.cluster));
      const infra = await waitFor(
        'the Cluster ownerRef on the InfraCluster',
        async () => {
          const o = await get(k.cluster, ns, 'work');
          return o?.metadata.ownerReferences?.some((r: Json) => r.kind === 'Cluster' && r.name === 'work') ? o : undefined;
        },
        60_000,
      );
      expect(infra.status.failureDomains).toHaveLength(6);
      const cluster = await waitFor(
        'Cluster infrastructureProvisioned',
        async () => {
          const c = await get('cluster.cluster.x-k8s.io', ns, 'work');
          return c?.status?.initialization?.infrastructureProvisioned === true && c.spec.controlPlaneEndpoint?.host ? c : undefined;
        },
        60_000,
      );
      expect(cluster.spec.controlPlaneEndpoint).toEqual({ host: '192.0.2.10', port: 6443 });
      const fds = cluster.status.failureDomains as { name: string; controlPlane?: boolean }[];
      expect(fds.map((f) => f.name).sort()).toEqual(['site-a-fd-1', 'site-a-fd-2', 'site-a-fd-3', 'site-b-fd-1', 'site-b-fd-2', 'site-b-fd-3']);
      expect(
        fds
          .filter((f) => f.controlPlane)
          .map((f) => f.name)
          .sort(),
      ).toEqual(['site-a-fd-1', 'site-a-fd-2', 'site-a-fd-3']);
    });

    it('adopts a Machine infrastructure object and reflects the providerID and status the test writes as the provider (provider simulated)', async () => {
      await apply({ apiVersion: INFRA, kind: k.machine, metadata: { name: 'm1', namespace: ns }, spec: { ...k.machineSpec, providerRef: { name: 'site-a' } } });
      await apply(capiMachine(ns, 'm1', { cluster: 'work', infraKind: k.machine, failureDomain: 'site-a-fd-2' }));
      const adopted = await waitFor(
        'the Machine to own its infrastructure',
        async () => {
          const o = await get(k.machine, ns, 'm1');
          return o?.metadata.ownerReferences?.some((r: Json) => r.kind === 'Machine' && r.controller) ? o : undefined;
        },
        60_000,
      );
      expect(adopted.metadata.labels['cluster.x-k8s.io/cluster-name']).toBe('work');
      // Play the provider: identity in spec, then status.
      await apply(
        { apiVersion: INFRA, kind: k.machine, metadata: { name: 'm1', namespace: ns }, spec: { providerID: k.providerID } },
        `banlieue.io/provider-${k.backend}`,
      );
      await env.kubectl([
        'patch',
        k.machine,
        'm1',
        '-n',
        ns,
        '--subresource=status',
        '--type=merge',
        '-p',
        JSON.stringify({
          status: {
            initialization: { provisioned: true },
            failureDomain: 'site-a-fd-2',
            addresses: [
              { type: 'InternalIP', address: '192.0.2.21' },
              { type: 'ExternalIP', address: '198.51.100.21' },
            ],
          },
        }),
      ]);
      const machine = await waitFor(
        'the Machine to reflect the provider',
        async () => {
          const m = await get('machine.cluster.x-k8s.io', ns, 'm1');
          return m?.status?.initialization?.infrastructureProvisioned === true && m.spec.providerID && m.status.addresses?.length === 2 ? m : undefined;
        },
        60_000,
      );
      expect(machine.spec.providerID).toBe(k.providerID);
      expect(machine.status.addresses).toEqual([
        { type: 'InternalIP', address: '192.0.2.21' },
        { type: 'ExternalIP', address: '198.51.100.21' },
      ]);
    });

    it('clones three infrastructure machines from a template for a MachineDeployment', async () => {
      await apply({
        apiVersion: INFRA,
        kind: k.template,
        metadata: { name: 'workers', namespace: ns },
        spec: { template: { spec: { ...k.machineSpec, providerRef: { name: 'site-b' } } } },
      });
      await apply(workersDeployment(ns, 'work', 3, k.template));
      const clones = await waitFor(
        'three cloned infrastructure machines',
        async () => {
          const list = JSON.parse(await env.kubectl(['get', k.machine, '-n', ns, '-o', 'json'])) as { items: Json[] };
          const cloned = list.items.filter((m) => m.metadata.annotations?.['cluster.x-k8s.io/cloned-from-name'] === 'workers');
          // Each clone ends up owned by the Machine it was made for.
          const owned = cloned.filter((m) => (m.metadata.ownerReferences ?? []).some((r: Json) => r.kind === 'Machine' && r.controller));
          return owned.length === 3 ? owned : undefined;
        },
        90_000,
      ).catch(async (err: unknown) => {
        // Say where CAPI stopped: the MachineDeployment and MachineSet conditions.
        const state = await env.kubectl(['get', 'machinedeployments,machinesets,machines', '-n', ns, '-o', 'yaml']);
        const capiSaid = env
          .capiLogs()
          .split('\n')
          .filter((l) => l.includes('workers') && /error|fail/i.test(l))
          .slice(-5)
          .join('\n');
        throw new Error(`${String(err)}\nCAPI manager:\n${capiSaid}\n${state.slice(0, 6000)}`);
      });
      // CAPI gives a MachineDeployment's Machines no failure domain; banlieue spreads them over the cluster's.
      const spread = await waitFor(
        'the clones to be spread over failure domains',
        async () => {
          const list = JSON.parse(await env.kubectl(['get', k.machine, '-n', ns, '-o', 'json'])) as { items: Json[] };
          const domains = list.items
            .filter((m) => m.metadata.annotations?.['cluster.x-k8s.io/cloned-from-name'] === 'workers')
            .map((m) => m.spec.failureDomain as string | undefined);
          return domains.length === 3 && domains.every((d) => d) ? domains : undefined;
        },
        60_000,
      );
      expect(new Set(spread).size).toBe(3);
      spread.forEach((d) => expect(d).toMatch(/^site-b-fd-[123]$/));
      // Autoscaling from zero: the template says what a machine of it offers a Node (every machineSpec here: 2 CPUs, 4096 MiB).
      const sized = await waitFor(
        'the template to publish status.capacity',
        async () => {
          const template = JSON.parse(await env.kubectl(['get', k.template, 'workers', '-n', ns, '-o', 'json'])) as Json;
          return template.status?.capacity ? template : undefined;
        },
        60_000,
      );
      expect(sized.status).toEqual({ capacity: { cpu: '2', memory: '4096Mi' }, nodeInfo: { architecture: 'amd64', operatingSystem: 'linux' } });
      for (const clone of clones) {
        expect(clone.metadata.annotations['cluster.x-k8s.io/cloned-from-name']).toBe('workers');
        expect(clone.spec).toMatchObject({ ...k.machineSpec, providerRef: { name: 'site-b' } });
        expect(clone.metadata.labels['cluster.x-k8s.io/cluster-name']).toBe('work');
      }
    });

    it('deletes the infrastructure with the Machine, and the InfraCluster with the Cluster', async () => {
      await env.kubectl(['delete', 'machine.cluster.x-k8s.io', 'm1', '-n', ns, '--wait=false']);
      await waitFor('the InfraMachine to go with its Machine', async () => (await get(k.machine, ns, 'm1')) === undefined, 60_000);
      await env.kubectl(['delete', 'cluster.cluster.x-k8s.io', 'work', '-n', ns, '--wait=false']);
      await waitFor('the InfraCluster to go with its Cluster', async () => (await get(k.cluster, ns, 'work')) === undefined, 120_000);
    });
  });

  describe('Machines provisioned by `banlieue provider vsphere` (vcsim as vCenter)', () => {
    const ns = 'capi-vsphere-vcsim';
    let vcsim: Vcsim;
    let client: VsphereClient;
    const bootstrap = '#cloud-config\nruncmd: [kubeadm join]\n';
    const machines = async (): Promise<Json[]> =>
      (JSON.parse(await env.kubectl(['get', 'vspheremachines', '-n', ns, '-o', 'json'])) as { items: Json[] }).items;

    beforeAll(async () => {
      vcsim = await startVcsim({ datacenters: 1, clusters: 2 });
      client = await vcsimClient(vcsim);
      await makeTemplate(client, 'ubuntu-2404');
      await env.kubectl(['create', 'namespace', ns]);
      const world = vsphereWorld(ns, vcsim, 'capi', 'ubuntu-2404');
      await apply(world.secret);
      await apply(world.provider);
      // The template its machines clone, published to them as an image by a VMImage.
      await apply(world.vmImage);
      // The provider runs as its ServiceAccount: the components' RBAC is what it gets.
      await env.startProvider('vsphere', ['--namespace', ns, '--poll-period', '1', '--rediscover-period', '5']);
      await waitFor(
        'the Provider to discover vcsim',
        async () => ((await get('provider', ns, 'vcsim'))?.status?.failureDomains?.length === 2 ? true : undefined),
        60_000,
      );
      // A bootstrap provider's output, as CAPI's bootstrap contract shapes it.
      await apply({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'workers-bootstrap', namespace: ns },
        stringData: { value: bootstrap, format: 'cloud-config' },
      });
    }, 300_000);

    afterAll(async () => {
      await client?.close();
      await vcsim?.stop();
    });

    it('provisions a MachineDeployment: VMs in vCenter, providerID and addresses on the Machines, bootstrap data in guestinfo', async () => {
      await apply({
        apiVersion: INFRA,
        kind: 'VSphereCluster',
        metadata: { name: 'real', namespace: ns },
        spec: { controlPlaneEndpoint: { host: '192.0.2.50', port: 6443 }, providerRefs: [{ name: 'vcsim' }] },
      });
      await apply(capiCluster(ns, 'real', 'VSphereCluster'));
      await apply({
        apiVersion: INFRA,
        kind: 'VSphereMachineTemplate',
        metadata: { name: 'workers', namespace: ns },
        spec: { template: { spec: { template: 'ubuntu-2404', numCpus: 2, memoryMiB: 2048, network: [{ name: 'eth0', portGroup: 'VM Network' }] } } },
      });
      await apply(workersDeployment(ns, 'real', 2, 'VSphereMachineTemplate'));
      const provisioned = await waitFor(
        'two VSphereMachines with a providerID and a VM',
        async () => {
          const list = (await machines()).filter((m) => typeof m.spec.providerID === 'string');
          const found = await Promise.all(list.map((m) => client.search.findVmByBiosUuid(uuidOf(m.spec.providerID as string))));
          return list.length === 2 && found.every((vm) => vm) ? list : undefined;
        },
        120_000,
      );
      // Play VMware Tools: each guest reports an address.
      for (const [i, m] of provisioned.entries()) await playTools(client, uuidOf(m.spec.providerID as string), `10.50.0.${i + 10}`);

      const capiMachines = await waitFor(
        'the Machines to take providerID and addresses from their VSphereMachines',
        async () => {
          const list = (JSON.parse(await env.kubectl(['get', 'machines.cluster.x-k8s.io', '-n', ns, '-o', 'json'])) as { items: Json[] }).items;
          return list.length === 2 &&
            list.every((m) => m.status?.initialization?.infrastructureProvisioned === true && m.spec.providerID && m.status.addresses?.length === 1)
            ? list
            : undefined;
        },
        120_000,
      );
      const byProviderId = new Map(provisioned.map((m) => [m.spec.providerID as string, m]));
      for (const m of capiMachines) {
        const infra = byProviderId.get(m.spec.providerID as string);
        expect(infra, `Machine ${m.metadata.name as string} providerID ${m.spec.providerID as string}`).toBeDefined();
        expect(m.status.addresses[0].address).toMatch(/^10\.50\.0\.1[01]$/);
        // The VM's UUID is the infra machine's own UID's: no VirtualMachine in between.
        expect(infra?.metadata.ownerReferences.some((r: Json) => r.kind === 'Machine' && r.controller)).toBe(true);
        const vm = await client.search.findVmByBiosUuid(uuidOf(m.spec.providerID as string));
        if (!vm) throw new Error('VM vanished');
        const userdata = (await client.vms.extraConfig(vm)).get('guestinfo.userdata') ?? '';
        expect(Buffer.from(userdata, 'base64').toString('utf8')).toBe(bootstrap);
      }
      // Spread over both failure domains (vcsim clusters) by banlieue, each in the cluster it names.
      expect(new Set(provisioned.map((m) => m.status?.failureDomain ?? m.spec.failureDomain)).size).toBe(2);
    });

    it('scaling the MachineDeployment to zero destroys the VMs', async () => {
      const before = (await machines()).map((m) => uuidOf(m.spec.providerID as string));
      expect(before).toHaveLength(2);
      await env.kubectl(['patch', 'machinedeployment', 'workers', '-n', ns, '--type=merge', '-p', JSON.stringify({ spec: { replicas: 0 } })]);
      await waitFor('the VSphereMachines to go', async () => ((await machines()).length === 0 ? true : undefined), 120_000);
      for (const uuid of before) expect(await client.search.findVmByBiosUuid(uuid)).toBeUndefined();
      expect(await vmsNamed(client, 'workers-')).toEqual([]);
    });

    it('pauses with its Cluster (as clusterctl move does): nothing is provisioned while Cluster.spec.paused, everything once unpaused', async () => {
      const pausedCondition = (o: Json | undefined): Json | undefined => o?.status?.conditions?.find((c: Json) => c.type === 'Paused');
      await env.kubectl(['patch', 'cluster.cluster.x-k8s.io', 'real', '-n', ns, '--type=merge', '-p', JSON.stringify({ spec: { paused: true } })]);
      const failureDomain = (await get('provider', ns, 'vcsim'))?.status?.failureDomains?.[0]?.name as string;
      await apply({
        apiVersion: INFRA,
        kind: 'VSphereMachine',
        metadata: { name: 'paused-1', namespace: ns, labels: { 'cluster.x-k8s.io/cluster-name': 'real' } },
        spec: {
          providerRef: { name: 'vcsim' },
          failureDomain,
          template: 'ubuntu-2404',
          numCpus: 1,
          memoryMiB: 512,
          userDataSecretRef: { name: 'workers-bootstrap' },
        },
      });
      const paused = await waitFor(
        'Paused=True on the VSphereMachine and the VSphereCluster',
        async () => {
          const machine = await get('vspheremachine', ns, 'paused-1');
          const cluster = await get('vspherecluster', ns, 'real');
          return pausedCondition(machine)?.status === 'True' && pausedCondition(cluster)?.status === 'True' ? { machine, cluster } : undefined;
        },
        60_000,
      );
      expect(pausedCondition(paused.machine)?.message).toContain('Cluster real has spec.paused');
      expect(pausedCondition(paused.cluster)?.message).toContain('Cluster real has spec.paused');
      expect(paused.machine?.spec.providerID).toBeUndefined();
      expect(await vmsNamed(client, 'paused-1')).toEqual([]);

      await env.kubectl(['patch', 'cluster.cluster.x-k8s.io', 'real', '-n', ns, '--type=merge', '-p', JSON.stringify({ spec: { paused: false } })]);
      await waitFor(
        'the VSphereMachine to be provisioned once unpaused',
        async () => ((await get('vspheremachine', ns, 'paused-1'))?.status?.initialization?.provisioned ? true : undefined),
        60_000,
      );
      expect(await vmsNamed(client, 'paused-1')).toEqual(['paused-1']);
      // The InfraCluster looks at its Cluster every 30 s (Clusters are not watched).
      await waitFor(
        'the VSphereCluster to be unpaused',
        async () => (pausedCondition(await get('vspherecluster', ns, 'real'))?.status === 'False' ? true : undefined),
        60_000,
      );
      await env.kubectl(['delete', 'vspheremachine', 'paused-1', '-n', ns, '--timeout=60s']);
      expect(await vmsNamed(client, 'paused-1')).toEqual([]);
    });
  });

  it('is refused by RBAC once our role no longer aggregates into CAPI (the rules are really enforced)', async () => {
    const ns = 'capi-rbac';
    await env.kubectl(['create', 'namespace', ns]);
    await env.kubectl(['label', 'clusterrole', 'banlieue-capi-infrastructure', 'cluster.x-k8s.io/aggregate-to-manager-']);
    try {
      await waitFor(
        'our rules to leave the aggregated role',
        async () => {
          const role = parse(await env.kubectl(['get', 'clusterrole', 'capi-aggregated-manager-role', '-o', 'yaml'])) as Json;
          return !(role.rules as { apiGroups: string[] }[]).some((r) => r.apiGroups.includes(GROUP)) || undefined;
        },
        60_000,
      );
      await apply({ apiVersion: INFRA, kind: 'VSphereCluster', metadata: { name: 'denied', namespace: ns }, spec: {} });
      await apply(capiCluster(ns, 'denied', 'VSphereCluster'));
      await waitFor(
        'a Forbidden answer to the CAPI manager',
        () => /forbidden[^\n]*vsphereclusters|vsphereclusters[^\n]*forbidden/i.test(env.capiLogs()) || undefined,
        90_000,
      );
      const infra = await get('VSphereCluster', ns, 'denied');
      expect(infra, 'the VSphereCluster the CAPI manager was refused').toBeDefined();
      expect(infra?.metadata.ownerReferences ?? []).toEqual([]);
    } finally {
      await env.kubectl(['label', 'clusterrole', 'banlieue-capi-infrastructure', 'cluster.x-k8s.io/aggregate-to-manager=true', '--overwrite']);
    }
    // Restored: CAPI can now take ownership.
    await waitFor(
      'the Cluster to own its VSphereCluster again',
      async () => {
        const o = await get('VSphereCluster', ns, 'denied');
        return o?.metadata.ownerReferences?.some((r: Json) => r.kind === 'Cluster') || undefined;
      },
      120_000,
    );
  });
});
