// A Cluster API cluster whose workers are banlieue libvirt guests that become
// Kubernetes nodes: the real CAPI manager, the real kubeadm bootstrap provider
// (CABPK) and the real clusterctl; the test writes no Node and no bootstrap
// data.
//
// The management cluster is the contract e2e's local environment
// (capi-environment.ts): its own API server, CAPI installed from the module
// cache, banlieue installed from its clusterctl components, its controller and
// libvirt provider running as their ServiceAccounts. CABPK runs beside them.
// The control plane is the played provider (played-providers.ts), reporting
// initialized a control plane of the test's own made joinable as kubeadm makes
// one (guest-workload.ts): `<cluster>-kubeconfig` reaches it on loopback,
// `<cluster>-ca` is its CA, so CABPK creates its bootstrap tokens there and
// computes the discovery hash. The guests boot the node image under TCG on a
// private libvirtd (tcg-host.ts) and dial that API server on their network's
// gateway, inside namespaces this test creates.
//
// The story, read from the API servers: two workers join (their kubelets'
// Nodes carry the LibvirtMachines' providerIDs, CAPI sets nodeRef, the
// Machines go Running); `clusterctl describe` shows banlieue's objects and the
// reason of a machine whose image does not exist; scaling to 3 and to 1 is
// followed by Nodes, domains and volumes; a MachineHealthCheck replaces a
// worker whose domain was removed behind banlieue's back.
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INFRA_GROUP } from '../../infra/api/kind.js';
import { localEnvironment, startCapiModuleManager, type CapiEnvironment } from '../contract/capi-environment.js';
import { installPlayedProviders, KUBERNETES_VERSION } from '../contract/capi-clusterclass-journey.js';
import { recordClusterctlInit } from '../contract/clusterctl-inventory.js';
import { CONTROL_PLANE_API, CONTROL_PLANE_GROUP, playControlPlanes } from '../contract/played-providers.js';
import { GUEST_LIBVIRT_NETWORK } from '../peers/libvirt/qemu-host.js';
import { buildCabpk, buildNodeKubeadm, buildTools, freePort, type Tools } from '../support/control-plane.js';
import { INFRA, type Obj } from '../support/fixtures.js';
import { GUEST_API_PORT, startGuestWorkload, type GuestWorkload } from '../support/libvirt/guest-workload.js';
import { startTcgHost, tcgProviderObjects, type TcgHost } from '../support/libvirt/tcg-host.js';
import { ensureNodeImage, nodeVmImage } from '../support/node-image.js';
import { waitFor } from '../support/wait.js';
import { createWebhookEndpoint } from '../contract/capi-webhooks.js';

/** TCG on a shared 2-core machine: minutes per guest, several guests at once. */
const NODES_TIMEOUT_MS = 1_500_000;
const POOL = 'nodes';
const IMAGE = 'kubernetes-node.qcow2';
const NS = 'capi-nodes';
const CLUSTER = 'workload';
const WORKERS = 'workers';
const CABPK_API = 'bootstrap.cluster.x-k8s.io/v1beta2';
const CABPK_GROUP = 'bootstrap.cluster.x-k8s.io';
const CAPI_API = 'cluster.x-k8s.io/v1beta2';
/** Printed on the serial console by preKubeadmCommands, before CABPK's `kubeadm join`. */
const MARK = 'banlieue-capi-nodes:';
/** Where a failed run keeps its guests' consoles. */
const CONSOLES = 'target/test-logs/capi-nodes';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function readYaml(path: string): Json[] {
  return parseAllDocuments(readFileSync(path, 'utf8'))
    .map((d) => d.toJS() as Json | null)
    .filter((d): d is Json => d !== null);
}

/** CABPK's CRDs with the contract labels its kustomization adds (CAPI picks the version of a reference by them). */
function cabpkCrds(moduleDir: string): string {
  const bases = join(moduleDir, 'bootstrap/kubeadm/config/crd/bases');
  const crds = readdirSync(bases)
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((f) => readYaml(join(bases, f)));
  for (const crd of crds) crd.metadata.labels = { ...crd.metadata.labels, 'cluster.x-k8s.io/v1beta1': 'v1beta1', 'cluster.x-k8s.io/v1beta2': 'v1beta2' };
  return crds.map((d) => stringify(d)).join('---\n');
}

/** The rows `clusterctl describe` prints for `rowName` (an object) and its condition rows, up to the next object's row. */
function describeRows(output: string, rowName: string): string[] {
  const lines = output.split('\n');
  const start = lines.findIndex((l) => l.includes(rowName));
  if (start < 0) return [];
  const end = lines.findIndex((l, i) => i > start && /\b[A-Z][A-Za-z]+ [a-z0-9-]+\/[a-z0-9.-]+/.test(l));
  return lines.slice(start, end < 0 ? undefined : end);
}

describe('a Cluster API cluster on banlieue libvirt guests: workers join, scale, are remediated and described', () => {
  const times: Record<string, number> = {};
  const dir = mkdtempSync(join(tmpdir(), 'banlieue-capi-nodes-'));
  const cabpkLog = join(dir, 'cabpk.log');
  let env: CapiEnvironment;
  let tools: Tools;
  let tcg: TcgHost;
  let workload: GuestWorkload;
  let cabpk: ChildProcess | undefined;
  let provider: { logs(): string } | undefined;
  const vmImage = nodeVmImage(Math.random().toString(36).slice(2, 7), IMAGE);

  const kubectl = (args: string[], input?: string): Promise<string> => env.kubectl(args, input);
  const apply = (obj: Json): Promise<string> => kubectl(['apply', '--server-side', '--field-manager=e2e', '-f', '-'], JSON.stringify(obj));
  const list = async (resource: string, selector?: string): Promise<Json[]> =>
    (JSON.parse(await kubectl(['get', resource, '-n', NS, '-o', 'json', ...(selector ? ['-l', selector] : [])])) as { items: Json[] }).items;
  const nodes = async (): Promise<Obj[]> => (await workload.api.api.request<{ items: Obj[] }>('GET', '/api/v1/nodes')).items;
  const domainNames = async (): Promise<string[]> => (await tcg.client.domains.list()).map((d) => d.name).sort();
  const volumeNames = async (): Promise<string[]> => {
    await tcg.client.pools.refresh(tcg.pool);
    return (await tcg.client.pools.listVolumes(tcg.pool)).map((v) => v.name).sort();
  };
  const consoleOf = (domainName: string): string => {
    try {
      return readFileSync(join(tcg.host.qemuLogDir, `${domainName}-console.log`), 'utf8');
    } catch {
      return '';
    }
  };
  /** A console's lines from cloud-init, kubeadm and the preKubeadmCommands' mark: where a join stopped. */
  const bootLines = (console: string): string =>
    console
      .split('\n')
      .filter(
        (l) =>
          /cloud-init|kubeadm|banlieue-capi-nodes|error|fail/i.test(l) && !/kubelet(\.service)?\[?\d*\]?:.*(config\.yaml|Failed with result|exited)/.test(l),
      )
      .join('\n');
  const tail = (path: string, chars: number): string => {
    try {
      return readFileSync(path, 'utf8').slice(-chars);
    } catch {
      return '';
    }
  };
  /** Rethrows `error` with what explains a stuck guest or controller: the consoles, the managers' and the provider's logs. */
  const fail = async (error: unknown): Promise<never> => {
    const domains = await domainNames().catch(() => []);
    // Each whole console is kept (the run's directory is removed); the error shows what cloud-init and kubeadm said, and the end.
    mkdirSync(CONSOLES, { recursive: true });
    for (const d of domains) writeFileSync(join(CONSOLES, `${d}-console.log`), consoleOf(d));
    throw new Error(
      [
        String(error),
        `whole consoles in ${CONSOLES}`,
        ...domains.map((d) => `console of ${d}, cloud-init and kubeadm: ${bootLines(consoleOf(d)).slice(-4000)}\n…its end: ${consoleOf(d).slice(-1500)}`),
        `cabpk: ${tail(cabpkLog, 2000)}`,
        `capi-manager: ${env.capiLogs().slice(-3000)}`,
        `kube-apiserver (workload): ${workload.plane.logTail('kube-apiserver', 10)}`,
        `provider: ${provider?.logs().slice(-2000) ?? ''}`,
      ].join('\n'),
    );
  };

  /**
   * The workers once there are `count` of them and each has joined: its Machine Running with a
   * nodeRef, its Node registered with the LibvirtMachine's providerID and Ready=True, its domain
   * defined; and nothing more (no LibvirtMachine, Node or domain of a removed worker).
   */
  const workersJoined = (count: number, what: string) =>
    waitFor(
      what,
      async () => {
        const machines = await list('machines.cluster.x-k8s.io', `cluster.x-k8s.io/deployment-name=${WORKERS}`);
        const infra = await list('libvirtmachines', `cluster.x-k8s.io/deployment-name=${WORKERS}`);
        const workerNodes = await nodes();
        if (machines.length !== count || infra.length !== count || workerNodes.length !== count) return undefined;
        const domains = await domainNames();
        const joined = machines.map((m) => {
          const node = workerNodes.find((n) => n.metadata.name === m.status?.nodeRef?.name);
          const ready = (node?.status?.conditions as { type: string; status: string }[] | undefined)?.find((c) => c.type === 'Ready');
          const owned = infra.find((i) => i.metadata.name === m.spec.infrastructureRef.name);
          return m.status?.phase === 'Running' && ready?.status === 'True' && node?.spec?.providerID === owned?.spec?.providerID
            ? { machine: m, node: node as Obj, infra: owned as Json }
            : undefined;
        });
        if (joined.some((j) => !j)) return undefined;
        const workers = joined.filter((j) => j !== undefined);
        return workers.every((w) => domains.includes(`${NS}-${w.infra.metadata.name as string}`)) && domains.length === count ? workers : undefined;
      },
      NODES_TIMEOUT_MS,
    ).catch(fail);

  beforeAll(async () => {
    const imageLookup = Date.now();
    const image = await ensureNodeImage();
    times.image = Date.now() - imageLookup;
    tools = await buildTools();
    const cabpkBinary = await buildCabpk();
    tcg = await startTcgHost(POOL, { file: image.disk, name: IMAGE });
    // makeJoinable's own token goes unused: CABPK creates the ones its joins name.
    workload = await startGuestWorkload(tools, tcg.host, await buildNodeKubeadm());

    env = await localEnvironment();
    await installPlayedProviders(env);
    await kubectl(['apply', '--server-side', '-f', '-'], cabpkCrds(tools.capiModuleDir));
    await kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
    // What `clusterctl init` records: clusterctl describe checks the management cluster's contract by it.
    await recordClusterctlInit(env);
    // CABPK with the admin's kubeconfig; its webhook server needs a certificate to start, nothing calls it.
    const cabpkPorts = { webhook: await freePort(), health: await freePort() };
    const cabpkWebhook = await createWebhookEndpoint(join(dir, 'cabpk'), cabpkPorts.webhook);
    cabpk = await startCapiModuleManager('CABPK', cabpkBinary, {
      kubeconfig: env.kubeconfig,
      certDir: cabpkWebhook.certDir,
      ports: cabpkPorts,
      logPath: cabpkLog,
    });

    await kubectl(['create', 'namespace', NS]);
    for (const obj of [...tcgProviderObjects(NS, tcg.host, POOL), vmImage]) await apply(obj);
    provider = await env.startProvider('libvirt', ['--namespace', NS, '--poll-period', '2']);
  }, 3_600_000);

  afterAll(async () => {
    // The Cluster first, while CAPI, CABPK and banlieue run to delete its Machines and their domains.
    if (env) {
      await kubectl(['delete', 'cluster.cluster.x-k8s.io', CLUSTER, '-n', NS, '--wait=false']).catch(() => undefined);
      await waitFor('the LibvirtMachines to go', async () => ((await list('libvirtmachines').catch(() => [])).length === 0 ? true : undefined), 300_000).catch(
        () => undefined,
      );
    }
    if (cabpk && cabpk.exitCode === null) {
      const exited = new Promise((resolve) => cabpk?.once('exit', resolve));
      cabpk.kill('SIGTERM');
      await exited;
    }
    await env?.stop();
    await tcg?.client.close();
    await workload?.listener.stop();
    await tcg?.host.stop();
    await workload?.plane.stop();
    rmSync(dir, { recursive: true, force: true });
  }, 900_000);

  it('two workers: CABPK renders their joins, their kubelets register Nodes with the LibvirtMachines’ providerIDs, CAPI marks the Machines Running', async () => {
    const endpoint = { host: GUEST_LIBVIRT_NETWORK.gateway, port: GUEST_API_PORT };
    const clusterLabel = { 'cluster.x-k8s.io/cluster-name': CLUSTER };
    // What the control-plane provider would write: the workload's admin kubeconfig (loopback) and CA.
    await apply({
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'cluster.x-k8s.io/secret',
      metadata: { name: `${CLUSTER}-kubeconfig`, namespace: NS, labels: clusterLabel },
      stringData: { value: readFileSync(workload.plane.kubeconfigPath, 'utf8') },
    });
    await apply({
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'cluster.x-k8s.io/secret',
      metadata: { name: `${CLUSTER}-ca`, namespace: NS, labels: clusterLabel },
      stringData: { 'tls.crt': workload.plane.caPem, 'tls.key': readFileSync(join(workload.plane.dir, 'pki', 'ca.key'), 'utf8') },
    });
    await apply({ apiVersion: CONTROL_PLANE_API, kind: 'TestControlPlane', metadata: { name: CLUSTER, namespace: NS }, spec: { version: KUBERNETES_VERSION } });
    await apply({
      apiVersion: INFRA,
      kind: 'LibvirtCluster',
      metadata: { name: CLUSTER, namespace: NS },
      spec: { controlPlaneEndpoint: endpoint, providerRefs: [{ name: 'tcg-host' }] },
    });
    await apply({
      apiVersion: CAPI_API,
      kind: 'Cluster',
      metadata: { name: CLUSTER, namespace: NS },
      spec: {
        controlPlaneEndpoint: endpoint,
        controlPlaneRef: { apiGroup: CONTROL_PLANE_GROUP, kind: 'TestControlPlane', name: CLUSTER },
        infrastructureRef: { apiGroup: INFRA_GROUP, kind: 'LibvirtCluster', name: CLUSTER },
      },
    });
    // The played control plane reports itself initialized, so CABPK joins workers, and externally
    // managed (it has no Machines), so CAPI deletes the Nodes of the Machines it deletes.
    await waitFor(
      'the Cluster’s control plane to be initialized',
      async () => {
        await playControlPlanes(kubectl, NS, { externallyManaged: true });
        const cluster = JSON.parse(await kubectl(['get', 'cluster.cluster.x-k8s.io', CLUSTER, '-n', NS, '-o', 'json'])) as Json;
        const init = cluster.status?.initialization;
        return init?.controlPlaneInitialized === true && init?.infrastructureProvisioned === true ? true : undefined;
      },
      180_000,
    ).catch(fail);

    await apply(libvirtMachineTemplate(WORKERS, IMAGE));
    await apply({
      apiVersion: CABPK_API,
      kind: 'KubeadmConfigTemplate',
      metadata: { name: WORKERS, namespace: NS },
      spec: {
        template: {
          spec: {
            joinConfiguration: {
              // Node name and provider-id from the meta-data banlieue writes, as infra/clusterctl/cluster-templates.ts does.
              nodeRegistration: {
                name: '{{ ds.meta_data.local_hostname }}',
                criSocket: 'unix:///var/run/containerd/containerd.sock',
                kubeletExtraArgs: [{ name: 'provider-id', value: '{{ ds.meta_data.provider_id }}' }],
              },
              // kubeadm's defaults (4-5 min) are short for a kubelet starting under TCG on a busy machine.
              timeouts: { discoverySeconds: 900, tlsBootstrapSeconds: 900, kubeletHealthCheckSeconds: 900 },
            },
            // The kubelet's and containerd's journal on the serial console, for the failure message.
            preKubeadmCommands: ['sh -c "journalctl -b -f -o short-monotonic -u kubelet -u containerd > /dev/console 2>&1 &"', `echo ${MARK} start`],
          },
        },
      },
    });
    const applied = Date.now();
    await apply(machineDeployment(WORKERS, 2));

    // CABPK's bootstrap data: a Secret owned by a Machine's KubeadmConfig, joining at the guests' endpoint.
    const config = await waitFor(
      'a KubeadmConfig with its data Secret',
      async () => (await list('kubeadmconfigs')).find((c) => typeof c.status?.dataSecretName === 'string'),
      300_000,
    ).catch(fail);
    times.data = Date.now() - applied;
    const secret = JSON.parse(await kubectl(['get', 'secret', config.status.dataSecretName as string, '-n', NS, '-o', 'json'])) as Json;
    expect(secret.metadata.ownerReferences.map((r: Json) => `${r.kind}/${r.name as string}`)).toContain(`KubeadmConfig/${config.metadata.name as string}`);
    const userData = Buffer.from(secret.data.value as string, 'base64').toString();
    expect(userData.startsWith('## template: jinja\n#cloud-config')).toBe(true);
    expect(userData).toContain(`apiServerEndpoint: ${GUEST_LIBVIRT_NETWORK.gateway}:${GUEST_API_PORT}`);
    // CABPK computed the CA hash from <cluster>-ca: the one kubeadm prints for the same CA.
    expect(userData).toContain(workload.join.caCertHash);
    expect(userData).toContain('{{ ds.meta_data.provider_id }}');
    const cabpkToken = /token: ([a-z0-9]{6})\.[a-z0-9]{16}/.exec(userData)?.[1];
    expect(cabpkToken).toBeDefined();
    expect(cabpkToken).not.toBe(workload.join.token.split('.')[0]);

    const workers = await workersJoined(2, 'two workers to join and their Machines to be Running');
    times.twoWorkers = Date.now() - applied;
    for (const { machine, node, infra } of workers) {
      expect(infra.spec.providerID).toMatch(/^libvirt:\/\/[0-9a-f-]{36}$/);
      expect(machine.spec.providerID).toBe(infra.spec.providerID);
      expect(machine.status.nodeRef.name).toBe(node.metadata.name);
      // The kubelet wrote spec.providerID (its own field manager); nothing of banlieue's or this test's wrote the Node.
      const { managedFields: managed = [] } = node.metadata as { managedFields?: { manager: string; fieldsV1?: { 'f:spec'?: Record<string, unknown> } }[] };
      expect(managed.find((m) => m.fieldsV1?.['f:spec']?.['f:providerID'] !== undefined)?.manager).toBe('kubelet');
      expect(managed.map((m) => m.manager).filter((m) => m.startsWith('banlieue') || m === 'e2e')).toEqual([]);
      expect((node.status?.conditions as { type: string; reason: string }[]).find((c) => c.type === 'Ready')?.reason).toBe('KubeletReady');
      // The guest booted with CABPK's data: its console shows the preKubeadmCommands' mark.
      expect(consoleOf(`${NS}-${infra.metadata.name as string}`)).toContain(`${MARK} start`);
    }
    // The kubelets' client certificates came through CABPK's tokens.
    const csrs = (await workload.api.api.request<{ items: Obj[] }>('GET', '/apis/certificates.k8s.io/v1/certificatesigningrequests')).items;
    expect(csrs.filter((c) => String(c.spec?.username).startsWith('system:bootstrap:')).length).toBeGreaterThanOrEqual(2);
    expect(csrs.map((c) => c.spec?.username)).toContain(`system:bootstrap:${String(cabpkToken)}`);
    console.log(
      `capi-nodes: ${workers.map((w) => `Machine ${w.machine.metadata.name as string} → Node ${w.node.metadata.name} (${String(w.node.spec?.providerID)})`).join('; ')}`,
    );
  }, 3_600_000);

  it('clusterctl describe shows each worker’s LibvirtMachine Ready, and banlieue’s reason and message for a machine whose image does not exist', async () => {
    await apply(libvirtMachineTemplate('no-image', 'no-such-image.qcow2'));
    await apply(machineDeployment('no-image', 1, WORKERS));
    const broken = await waitFor(
      'the LibvirtMachine of the missing image to say why it waits',
      async () => {
        const [m] = await list('libvirtmachines', 'cluster.x-k8s.io/deployment-name=no-image');
        const ready = (m?.status?.conditions as Json[] | undefined)?.find((c) => c.type === 'Ready');
        return ready?.status === 'False' && ready.reason === 'TargetNotPublished' ? { machine: m as Json, ready } : undefined;
      },
      300_000,
    ).catch(fail);
    expect(broken.ready.message).toContain('no-such-image.qcow2');

    const output = await env.clusterctl(
      ['describe', 'cluster', CLUSTER, '-n', NS, '--kubeconfig', env.kubeconfig, '--show-conditions', 'all', '--echo', '--grouping=false'],
      { NO_COLOR: '1' },
    );
    console.log(`clusterctl describe cluster ${CLUSTER} --show-conditions all --echo --grouping=false:\n${output}`);
    for (const infra of await list('libvirtmachines', `cluster.x-k8s.io/deployment-name=${WORKERS}`)) {
      const rows = describeRows(output, `LibvirtMachine ${NS}/${infra.metadata.name as string}`);
      // Under its Machine, as the Machine's infrastructure.
      const owner = (infra.metadata.ownerReferences as Json[]).find((r) => r.kind === 'Machine')?.name as string;
      expect(output.indexOf(`─Machine ${NS}/${owner}`), output).toBeGreaterThanOrEqual(0);
      expect(output.indexOf(`─Machine ${NS}/${owner}`)).toBeLessThan(output.indexOf(`LibvirtMachine ${NS}/${infra.metadata.name as string}`));
      expect(
        rows.some((r) => /\bReady\s+True\b/.test(r)),
        rows.join('\n'),
      ).toBe(true);
    }
    const rows = describeRows(output, `LibvirtMachine ${NS}/${broken.machine.metadata.name as string}`);
    // The message's start: a table row holds its first line.
    const firstLine = String(broken.ready.message).split('\n')[0]?.slice(0, 60) ?? '';
    expect(
      rows.some((r) => /\bReady\s+False\s+TargetNotPublished\b/.test(r) && r.includes(firstLine)),
      rows.join('\n'),
    ).toBe(true);

    await kubectl(['delete', 'machinedeployment.cluster.x-k8s.io', 'no-image', '-n', NS, '--wait=false']);
    await waitFor(
      'the machine of the missing image to go',
      async () => ((await list('libvirtmachines', 'cluster.x-k8s.io/deployment-name=no-image')).length === 0 ? true : undefined),
      300_000,
    ).catch(fail);
  }, 3_600_000);

  it('scaling the MachineDeployment to 3 and then to 1: Nodes join and leave, banlieue defines and then destroys the domains and their volumes', async () => {
    const two = await workersJoined(2, 'the two workers');
    const volumesOfTwo = await volumeNames();
    const scaled = Date.now();
    await kubectl(['scale', 'machinedeployment.cluster.x-k8s.io', WORKERS, '-n', NS, '--replicas=3']);
    const three = await workersJoined(3, 'a third worker to join');
    times.scaleUp = Date.now() - scaled;
    const added = three.filter((w) => !two.some((t) => t.machine.metadata.name === w.machine.metadata.name));
    expect(added).toHaveLength(1);
    // Its disk and seed in the pool, named by its UUID.
    const addedUuid = String(added[0]?.infra.spec.providerID).replace(/^libvirt:\/\//, '');
    expect((await volumeNames()).filter((v) => v.startsWith(`${addedUuid}-`) && !volumesOfTwo.includes(v)).length).toBeGreaterThan(0);

    const down = Date.now();
    await kubectl(['scale', 'machinedeployment.cluster.x-k8s.io', WORKERS, '-n', NS, '--replicas=1']);
    const [kept] = await workersJoined(1, 'two workers to be removed');
    times.scaleDown = Date.now() - down;
    const removed = three.filter((w) => w.machine.metadata.name !== kept?.machine.metadata.name);
    expect(removed).toHaveLength(2);
    // Their Nodes are gone (CAPI drained and deleted them), their domains and volumes too (banlieue destroyed them).
    const nodeNames = (await nodes()).map((n) => n.metadata.name);
    const domains = await domainNames();
    const volumes = await volumeNames();
    for (const { node, infra } of removed) {
      expect(nodeNames).not.toContain(node.metadata.name);
      expect(domains).not.toContain(`${NS}-${infra.metadata.name as string}`);
      const uuid = String(infra.spec.providerID).replace(/^libvirt:\/\//, '');
      expect(volumes.filter((v) => v.startsWith(`${uuid}-`))).toEqual([]);
    }
    expect(volumes).toContain(IMAGE);
  }, 3_600_000);

  it('a MachineHealthCheck replaces the worker whose domain was removed behind banlieue’s back with a new guest that joins', async () => {
    await apply({
      apiVersion: CAPI_API,
      kind: 'MachineHealthCheck',
      metadata: { name: WORKERS, namespace: NS },
      spec: {
        clusterName: CLUSTER,
        selector: { matchLabels: { 'cluster.x-k8s.io/deployment-name': WORKERS } },
        checks: {
          nodeStartupTimeoutSeconds: 1800,
          unhealthyNodeConditions: [
            { type: 'Ready', status: 'Unknown', timeoutSeconds: 30 },
            { type: 'Ready', status: 'False', timeoutSeconds: 30 },
          ],
        },
      },
    });
    const [victim] = await workersJoined(1, 'the one worker');
    if (!victim) throw new Error('no worker');
    await waitFor(
      'the MachineHealthCheck to count the worker healthy',
      async () => {
        const mhc = JSON.parse(await kubectl(['get', 'machinehealthcheck.cluster.x-k8s.io', WORKERS, '-n', NS, '-o', 'json'])) as Json;
        return mhc.status?.expectedMachines === 1 && mhc.status?.currentHealthy === 1 ? true : undefined;
      },
      300_000,
    ).catch(fail);

    // Behind banlieue's back: the domain is stopped and undefined on the host.
    const removedAt = Date.now();
    const domain = await tcg.client.domains.lookupByName(`${NS}-${victim.infra.metadata.name as string}`);
    await tcg.client.domains.destroy(domain);
    await tcg.client.domains.undefine(domain);

    const [replacement] = await workersJoined(1, 'a new worker to replace the one whose domain was removed');
    times.remediation = Date.now() - removedAt;
    expect(replacement?.machine.metadata.name).not.toBe(victim.machine.metadata.name);
    expect(replacement?.node.metadata.name).not.toBe(victim.node.metadata.name);
    expect(replacement?.infra.spec.providerID).not.toBe(victim.infra.spec.providerID);
    expect((await nodes()).map((n) => n.metadata.name)).toEqual([replacement?.node.metadata.name]);
    // CAPI remediated the Machine (banlieue did not re-create the VM on its own): the Machine is gone, not repaired.
    expect((await list('machines.cluster.x-k8s.io')).map((m) => m.metadata.name)).not.toContain(victim.machine.metadata.name);
    console.log(
      `capi-nodes times: image ${seconds(times.image)} (node-image.sh), bootstrap data ${seconds(times.data)} (MachineDeployment applied → CABPK's Secret), ` +
        `two workers ${seconds(times.twoWorkers)} (→ both Nodes Ready, Machines Running), scale 2→3 ${seconds(times.scaleUp)}, 3→1 ${seconds(times.scaleDown)}, ` +
        `remediation ${seconds(times.remediation)} (domain removed → new Node Ready)`,
    );
  }, 3_600_000);

  function libvirtMachineTemplate(name: string, volume: string): Json {
    return {
      apiVersion: INFRA,
      kind: 'LibvirtMachineTemplate',
      metadata: { name, namespace: NS },
      spec: {
        template: {
          spec: {
            pool: POOL,
            bootSource: { kind: 'backingVolume', volume },
            // One vCPU each: TCG guests share the machine's two cores.
            vcpus: 1,
            memoryMiB: 2048,
            disks: [{ name: 'os', sizeGiB: 8 }],
            network: [{ name: 'eth0', source: { kind: 'network', name: GUEST_LIBVIRT_NETWORK.name } }],
          },
        },
      },
    };
  }

  function machineDeployment(name: string, replicas: number, bootstrapTemplate = name): Json {
    return {
      apiVersion: CAPI_API,
      kind: 'MachineDeployment',
      metadata: { name, namespace: NS },
      spec: {
        clusterName: CLUSTER,
        replicas,
        selector: {},
        template: {
          spec: {
            clusterName: CLUSTER,
            version: KUBERNETES_VERSION,
            bootstrap: { configRef: { apiGroup: CABPK_GROUP, kind: 'KubeadmConfigTemplate', name: bootstrapTemplate } },
            infrastructureRef: { apiGroup: INFRA_GROUP, kind: 'LibvirtMachineTemplate', name },
          },
        },
      },
    };
  }
});

function seconds(ms: number | undefined): string {
  return ms === undefined ? '?' : `${Math.round(ms / 1000)} s`;
}
