// Cluster API workers that become nodes: the real kubeadm bootstrap provider
// (CABPK) writes the join, not the test. As in node-join.test.ts, a banlieue
// libvirt guest booted from the node image joins a control plane of this
// test's own (joinable-control-plane.ts), reached by guests on the libvirt
// network's gateway (listen-in-namespace.ts).
//
// The management cluster is the suite's shared API server. On it, the real
// CAPI manager (its CRDs, conversion and admission webhooks as the contract
// e2e serves them, capi-webhooks.ts) and the real CABPK (its CRDs from the
// same module; its webhooks not registered) run as processes, with the
// admin's kubeconfig. The control plane is the played provider
// (played-providers.ts): a TestControlPlane reported initialized, whose
// Cluster's `<cluster>-kubeconfig` reaches the workload API server on
// 127.0.0.1 and whose `<cluster>-ca` is its CA, so CABPK creates the
// bootstrap token there and computes the discovery CA hash.
//
// A MachineDeployment of LibvirtMachines and KubeadmConfigs: CAPI creates the
// Machine, CABPK its bootstrap data Secret, banlieue the domain booting with
// it (the provider stops until the Machine owns its LibvirtMachine: see the
// test). Asserted from the API servers: the Node the kubelet registered carries
// the LibvirtMachine's providerID (field manager kubelet), and CAPI sets the
// Machine's nodeRef and phase Running. The test writes no Node and no
// bootstrap data.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, createWriteStream, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { LibvirtClient } from '../../controller/backends/libvirt/client/libvirt-client.js';
import { INFRA_GROUP } from '../../infra/api/kind.js';
import { capiCrdsWithConversion, capiWebhookConfigurations, createWebhookEndpoint, waitForCapiWebhooks } from '../contract/capi-webhooks.js';
import { CONTROL_PLANE_API, CONTROL_PLANE_GROUP, playControlPlanes, playedProviderComponents } from '../contract/played-providers.js';
import { GUEST_LIBVIRT_NETWORK, guestLibvirtNetworkXml, startQemuHost, type QemuHost } from '../peers/libvirt/qemu-host.js';
import { buildTools, freePort, type Tools } from '../support/control-plane.js';
import { startRole, type RoleProcess } from '../support/controller-process.js';
import { CORE, INFRA, TestApi, type Obj } from '../support/fixtures.js';
import { JoinableControlPlane, type JoinCommand } from '../support/joinable-control-plane.js';
import { createNamespace } from '../support/kube.js';
import { libvirtProviderArgs } from '../support/libvirt/env.js';
import { listenInNamespace, type NamespaceListener } from '../support/listen-in-namespace.js';
import { ensureNodeImage, nodeKubeadm } from '../support/node-image.js';
import { PlaneClient } from '../support/plane-client.js';
import { waitFor } from '../support/wait.js';

const run = promisify(execFile);

/** TCG on a shared 2-core machine: minutes per guest (node-join.test.ts). */
const BOOT_TIMEOUT_MS = 600_000;
const JOIN_TIMEOUT_MS = 600_000;
const POOL = 'nodes';
const IMAGE = 'kubernetes-node.qcow2';
const API_PORT = 6443;
const KUBERNETES_VERSION = 'v1.35.4';
const CLUSTER = 'workload';
const BOOTSTRAP_API = 'bootstrap.cluster.x-k8s.io/v1beta2';
const BOOTSTRAP_GROUP = 'bootstrap.cluster.x-k8s.io';
const CAPI_API = 'cluster.x-k8s.io/v1beta2';
/** Printed on the serial console by preKubeadmCommands, before CABPK's `kubeadm join`. */
const MARK = 'banlieue-capi-workers:';

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

/** A manager of the CAPI module (core or CABPK) on loopback ports, logging to `logPath`. */
function startManager(binary: string, args: string[], logPath: string): ChildProcess {
  const child = spawn(binary, args);
  const log = createWriteStream(logPath);
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  return child;
}

async function waitHealthy(name: string, child: ChildProcess, healthPort: number, logPath: string): Promise<void> {
  await waitFor(
    `${name} to be ready`,
    async () => {
      if (child.exitCode !== null) throw new Error(`${name} exited:\n${readFileSync(logPath, 'utf8').slice(-3000)}`);
      const res = await fetch(`http://127.0.0.1:${healthPort}/readyz`).catch(() => undefined);
      return res?.ok;
    },
    120_000,
  );
}

async function stopProcess(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

const t = new TestApi();

describe('a MachineDeployment with the real kubeadm bootstrap provider: its libvirt guest joins as a Node', () => {
  const times: Record<string, number> = {};
  const dir = mkdtempSync(join(tmpdir(), 'banlieue-capi-workers-'));
  const capiLog = join(dir, 'capi-manager.log');
  const cabpkLog = join(dir, 'cabpk.log');
  let tools: Tools;
  let host: QemuHost;
  let client: LibvirtClient;
  let workload: JoinableControlPlane;
  let workloadApi: PlaneClient;
  let listener: NamespaceListener;
  let joinCommand: JoinCommand;
  let ns = '';
  let removeNs: () => Promise<void>;
  let controller: RoleProcess;
  let provider: RoleProcess;
  let capi: ChildProcess | undefined;
  let cabpk: ChildProcess | undefined;
  let installed = '';
  let webhookConfigurations = '';
  const suffix = Math.random().toString(36).slice(2, 7);
  const vmImage: Obj = {
    apiVersion: CORE,
    kind: 'VMImage',
    metadata: { name: `kubernetes-node-${suffix}` },
    spec: {
      osFamily: 'linux',
      osDistribution: 'debian',
      osVersion: '12',
      architecture: 'amd64',
      sources: [{ providerClass: 'libvirt', kind: 'BackingFile', ref: IMAGE }],
    },
  };
  const kubectl = (args: string[], input?: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const child = spawn(inject('kubectl'), ['--kubeconfig', inject('kubeconfig'), ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`kubectl ${args.join(' ')}: ${err}`))));
      child.stdin.end(input ?? '');
    });
  const apply = (obj: Json): Promise<string> => kubectl(['apply', '--server-side', '--field-manager=e2e', '-f', '-'], JSON.stringify(obj));
  const list = async (resource: string): Promise<Json[]> => (JSON.parse(await kubectl(['get', resource, '-n', ns, '-o', 'json'])) as { items: Json[] }).items;

  beforeAll(async () => {
    const image = await ensureNodeImage();
    const kubeadm = await nodeKubeadm();
    tools = await buildTools();
    const { stdout } = await run('test/tools/build.sh', ['cabpk'], { timeout: 1_800_000, maxBuffer: 16 << 20 });
    const cabpkBinary = /^cabpk \S+ (\S+)$/m.exec(stdout)?.[1];
    if (!cabpkBinary) throw new Error(`test/tools/build.sh cabpk named no binary: ${stdout}`);

    host = await startQemuHost();
    client = await LibvirtClient.connect({ uri: host.uri });
    mkdirSync(join(host.dir, 'pool'));
    copyFileSync(image.disk, join(host.dir, 'pool', IMAGE));
    await client.pools.createTransient(`<pool type='dir'><name>${POOL}</name><target><path>${join(host.dir, 'pool')}</path></target></pool>`);
    await client.networks.createTransient(guestLibvirtNetworkXml());

    // The workload cluster, joinable (kubeadm-config, kubelet-config, cluster-info, the bootstrap RBAC).
    // makeJoinable's own token goes unused: CABPK creates the one its join names.
    workload = await JoinableControlPlane.start(tools, { guestAddress: GUEST_LIBVIRT_NETWORK.gateway, guestPort: API_PORT });
    workloadApi = new PlaneClient(workload.kubeconfigPath);
    listener = await listenInNamespace(host, { address: GUEST_LIBVIRT_NETWORK.gateway, port: API_PORT }, workload.port);
    joinCommand = await workload.makeJoinable(kubeadm, (command, args, options) => host.spawn(command, args, options));

    // CAPI's CRDs (conversion by its manager), CABPK's, the played control-plane provider's.
    const capiPorts = { webhook: await freePort(), health: await freePort() };
    const webhook = await createWebhookEndpoint(join(dir, 'capi'), capiPorts.webhook);
    installed = [capiCrdsWithConversion(tools.capiModuleDir, webhook), cabpkCrds(tools.capiModuleDir), playedProviderComponents()].join('---\n');
    await kubectl(['apply', '--server-side', '-f', '-'], installed);
    await kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);

    capi = startManager(
      tools.capiManager,
      [
        `--kubeconfig=${inject('kubeconfig')}`,
        '--leader-elect=false',
        `--webhook-port=${capiPorts.webhook}`,
        `--webhook-cert-dir=${webhook.certDir}`,
        `--health-addr=127.0.0.1:${capiPorts.health}`,
        '--diagnostics-address=0',
        '--skip-crd-migration-phases=StorageVersionMigration,CleanupManagedFields',
        '--sync-period=1m',
        '-v=2',
      ],
      capiLog,
    );
    await waitHealthy('the CAPI manager', capi, capiPorts.health, capiLog);
    webhookConfigurations = capiWebhookConfigurations(tools.capiModuleDir, webhook);
    await kubectl(['apply', '--server-side', '-f', '-'], webhookConfigurations);
    await waitForCapiWebhooks(kubectl);

    // CABPK: its webhook server needs a certificate to start; nothing calls it.
    const cabpkPorts = { webhook: await freePort(), health: await freePort() };
    const cabpkWebhook = await createWebhookEndpoint(join(dir, 'cabpk'), cabpkPorts.webhook);
    cabpk = startManager(
      cabpkBinary,
      [
        `--kubeconfig=${inject('kubeconfig')}`,
        '--leader-elect=false',
        `--webhook-port=${cabpkPorts.webhook}`,
        `--webhook-cert-dir=${cabpkWebhook.certDir}`,
        `--health-addr=127.0.0.1:${cabpkPorts.health}`,
        '--diagnostics-address=0',
        '--skip-crd-migration-phases=StorageVersionMigration,CleanupManagedFields',
        '-v=2',
      ],
      cabpkLog,
    );
    await waitHealthy('CABPK', cabpk, cabpkPorts.health, cabpkLog);

    ({ name: ns, remove: removeNs } = await createNamespace('capi-workers'));
    for (const obj of [
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'host-creds', namespace: ns }, stringData: {} },
      {
        apiVersion: CORE,
        kind: 'Provider',
        metadata: { name: 'tcg-host', namespace: ns },
        spec: {
          providerClassRef: { name: 'libvirt' },
          connection: { endpoint: host.uri, credentialsRef: { name: 'host-creds' } },
          libvirt: { domainType: 'qemu' },
          capabilities: {
            storageClasses: [{ name: 'local', target: { pool: POOL } }],
            networkClasses: [{ name: 'lan', target: { network: GUEST_LIBVIRT_NETWORK.name } }],
          },
        },
      },
      vmImage,
    ] as Obj[]) {
      await t.apply(obj);
    }
    controller = await startRole(['controller', '--kubeconfig', inject('kubeconfig'), '--no-leader-elect', '--namespace', ns]);
    provider = await startRole(libvirtProviderArgs(ns));
  }, 1_800_000);

  afterAll(async () => {
    // The Cluster first, while CAPI, CABPK and banlieue run to delete its Machines and their domains.
    if (ns) {
      await kubectl(['delete', 'cluster.cluster.x-k8s.io', CLUSTER, '-n', ns, '--wait=false']).catch(() => undefined);
      await waitFor('the LibvirtMachines to go', async () => ((await list('libvirtmachines').catch(() => [])).length === 0 ? true : undefined), 180_000).catch(
        () => undefined,
      );
      await waitFor(
        'the Cluster to go',
        async () => ((await list('clusters.cluster.x-k8s.io').catch(() => [])).length === 0 ? true : undefined),
        120_000,
      ).catch(() => undefined);
    }
    await controller?.stop();
    await provider?.stop();
    await stopProcess(cabpk);
    await stopProcess(capi);
    if (webhookConfigurations) await kubectl(['delete', '--ignore-not-found', '-f', '-'], webhookConfigurations).catch(() => undefined);
    await t.delete(vmImage).catch(() => undefined);
    await client?.close();
    await listener?.stop();
    await host?.stop();
    await workload?.stop();
    await removeNs?.();
    if (installed) await kubectl(['delete', '--ignore-not-found', '--wait=false', '-f', '-'], installed).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }, 600_000);

  const consoleOf = (domainName: string): string => {
    try {
      return readFileSync(join(host.qemuLogDir, `${domainName}-console.log`), 'utf8');
    } catch {
      return '';
    }
  };
  const tail = (path: string, chars: number): string => {
    try {
      return readFileSync(path, 'utf8').slice(-chars);
    } catch {
      return '';
    }
  };
  const failure = (error: unknown, domainName = ''): Error =>
    new Error(
      [
        String(error),
        `console: ${domainName ? consoleOf(domainName).slice(-6000) : ''}`,
        `cabpk: ${tail(cabpkLog, 3000)}`,
        `capi-manager: ${tail(capiLog, 3000)}`,
        `kube-apiserver: ${workload.logTail('kube-apiserver', 15)}`,
        `provider: ${provider.logs().slice(-2000)}`,
      ].join('\n'),
    );

  it('CABPK renders the join, the guest boots with it, its kubelet’s Node has the LibvirtMachine’s providerID and the Machine goes Running', async () => {
    const endpoint = { host: GUEST_LIBVIRT_NETWORK.gateway, port: API_PORT };
    const clusterLabel = { 'cluster.x-k8s.io/cluster-name': CLUSTER };
    // What the control-plane provider would write: the workload's admin kubeconfig (loopback) and CA.
    await apply({
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'cluster.x-k8s.io/secret',
      metadata: { name: `${CLUSTER}-kubeconfig`, namespace: ns, labels: clusterLabel },
      stringData: { value: readFileSync(workload.kubeconfigPath, 'utf8') },
    });
    await apply({
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'cluster.x-k8s.io/secret',
      metadata: { name: `${CLUSTER}-ca`, namespace: ns, labels: clusterLabel },
      stringData: { 'tls.crt': workload.caPem, 'tls.key': readFileSync(join(workload.dir, 'pki', 'ca.key'), 'utf8') },
    });
    await apply({ apiVersion: CONTROL_PLANE_API, kind: 'TestControlPlane', metadata: { name: CLUSTER, namespace: ns }, spec: { version: KUBERNETES_VERSION } });
    await apply({
      apiVersion: INFRA,
      kind: 'LibvirtCluster',
      metadata: { name: CLUSTER, namespace: ns },
      spec: { controlPlaneEndpoint: endpoint, providerRefs: [{ name: 'tcg-host' }] },
    });
    await apply({
      apiVersion: CAPI_API,
      kind: 'Cluster',
      metadata: { name: CLUSTER, namespace: ns },
      spec: {
        controlPlaneEndpoint: endpoint,
        controlPlaneRef: { apiGroup: CONTROL_PLANE_GROUP, kind: 'TestControlPlane', name: CLUSTER },
        infrastructureRef: { apiGroup: INFRA_GROUP, kind: 'LibvirtCluster', name: CLUSTER },
      },
    });
    // The played control plane reports itself initialized, so CABPK joins workers.
    await waitFor(
      'the Cluster’s control plane to be initialized',
      async () => {
        await playControlPlanes(kubectl, ns);
        const cluster = JSON.parse(await kubectl(['get', 'cluster.cluster.x-k8s.io', CLUSTER, '-n', ns, '-o', 'json'])) as Json;
        return cluster.status?.initialization?.controlPlaneInitialized === true && cluster.status?.initialization?.infrastructureProvisioned === true
          ? true
          : undefined;
      },
      120_000,
    ).catch((e: unknown) => {
      throw failure(e);
    });
    // banlieue boots a LibvirtMachine without user-data when no Machine owns it (yet), as none owns
    // one a MachineSet has just created (CAPI v1.14 creates it before the Machine, owned by the
    // MachineSet). So the provider, which the LibvirtCluster needed, stops until the Machine owns it.
    await provider.stop();

    await apply({
      apiVersion: INFRA,
      kind: 'LibvirtMachineTemplate',
      metadata: { name: 'workers', namespace: ns },
      spec: {
        template: {
          spec: {
            pool: POOL,
            bootSource: { kind: 'backingVolume', volume: IMAGE },
            vcpus: 2,
            memoryMiB: 2048,
            disks: [{ name: 'os', sizeGiB: 8 }],
            network: [{ name: 'eth0', source: { kind: 'network', name: GUEST_LIBVIRT_NETWORK.name } }],
          },
        },
      },
    });
    await apply({
      apiVersion: BOOTSTRAP_API,
      kind: 'KubeadmConfigTemplate',
      metadata: { name: 'workers', namespace: ns },
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
              timeouts: { discoverySeconds: 600, tlsBootstrapSeconds: 600, kubeletHealthCheckSeconds: 600 },
            },
            // The kubelet's and containerd's journal on the serial console, for the failure message.
            preKubeadmCommands: ['sh -c "journalctl -b -f -o short-monotonic -u kubelet -u containerd > /dev/console 2>&1 &"', `echo ${MARK} start`],
          },
        },
      },
    });
    const applied = Date.now();
    await apply({
      apiVersion: CAPI_API,
      kind: 'MachineDeployment',
      metadata: { name: 'workers', namespace: ns },
      spec: {
        clusterName: CLUSTER,
        replicas: 1,
        selector: {},
        template: {
          spec: {
            clusterName: CLUSTER,
            version: KUBERNETES_VERSION,
            bootstrap: { configRef: { apiGroup: BOOTSTRAP_GROUP, kind: 'KubeadmConfigTemplate', name: 'workers' } },
            infrastructureRef: { apiGroup: INFRA_GROUP, kind: 'LibvirtMachineTemplate', name: 'workers' },
          },
        },
      },
    });

    // CABPK's bootstrap data: a Secret owned by the Machine's KubeadmConfig, joining at the guests' endpoint.
    const config = await waitFor(
      'a KubeadmConfig with its data Secret',
      async () => (await list('kubeadmconfigs')).find((c) => typeof c.status?.dataSecretName === 'string'),
      180_000,
    ).catch((e: unknown) => {
      throw failure(e);
    });
    times.data = Date.now() - applied;
    const secret = JSON.parse(await kubectl(['get', 'secret', config.status.dataSecretName as string, '-n', ns, '-o', 'json'])) as Json;
    expect(secret.metadata.ownerReferences.map((r: Json) => `${r.kind}/${r.name as string}`)).toContain(`KubeadmConfig/${config.metadata.name as string}`);
    const userData = Buffer.from(secret.data.value as string, 'base64').toString();
    expect(userData.startsWith('## template: jinja\n#cloud-config')).toBe(true);
    expect(userData).toContain(`apiServerEndpoint: ${GUEST_LIBVIRT_NETWORK.gateway}:${API_PORT}`);
    // CABPK computed the CA hash from <cluster>-ca: the one kubeadm prints for the same CA.
    expect(userData).toContain(joinCommand.caCertHash);
    expect(userData).toContain('{{ ds.meta_data.provider_id }}');
    const cabpkToken = /token: ([a-z0-9]{6})\.[a-z0-9]{16}/.exec(userData)?.[1];
    expect(cabpkToken).toBeDefined();
    expect(cabpkToken).not.toBe(joinCommand.token.split('.')[0]);

    // The provider again, once the Machine owns its LibvirtMachine: it boots with CABPK's data.
    const machine = await waitFor(
      'the Machine to own its LibvirtMachine',
      async () => {
        const [m] = await list('machines.cluster.x-k8s.io');
        const [owned] = await list('libvirtmachines');
        const owner = (owned?.metadata.ownerReferences as Json[] | undefined)?.find((r) => r.kind === 'Machine' && r.controller === true);
        return m && owner?.uid === m.metadata.uid && m.spec.bootstrap?.dataSecretName === config.status.dataSecretName ? m : undefined;
      },
      180_000,
    ).catch((e: unknown) => {
      throw failure(e);
    });
    const machineName = machine.metadata.name as string;
    provider = await startRole(libvirtProviderArgs(ns));
    const infra = await waitFor(
      'the LibvirtMachine to have a providerID',
      async () => (await list('libvirtmachines')).find((m) => typeof m.spec?.providerID === 'string'),
      180_000,
    ).catch((e: unknown) => {
      throw failure(e);
    });
    const providerID = infra.spec.providerID as string;
    expect(providerID).toMatch(/^libvirt:\/\/[0-9a-f-]{36}$/);
    const domainName = `${ns}-${infra.metadata.name as string}`;
    const fail = (error: unknown): never => {
      throw failure(error, domainName);
    };

    await waitFor('the guest to start CABPK’s kubeadm join', () => consoleOf(domainName).includes(`${MARK} start`) || undefined, BOOT_TIMEOUT_MS).catch(fail);
    times.boot = Date.now() - applied - times.data;

    const node = await waitFor(
      'a Node with the LibvirtMachine’s providerID',
      async () => (await workloadApi.api.request<{ items: Obj[] }>('GET', '/api/v1/nodes')).items.find((n) => n.spec?.providerID === providerID),
      JOIN_TIMEOUT_MS,
    ).catch(fail);
    times.join = Date.now() - applied - times.data - times.boot;
    const { managedFields: managed = [] } = node.metadata as { managedFields?: { manager: string; fieldsV1?: { 'f:spec'?: Record<string, unknown> } }[] };
    expect(managed.find((m) => m.fieldsV1?.['f:spec']?.['f:providerID'] !== undefined)?.manager).toBe('kubelet');
    expect(managed.map((m) => m.manager).filter((m) => m.startsWith('banlieue') || m === 'e2e')).toEqual([]);

    // CAPI finds the Node by providerID: nodeRef, and the Machine goes Running.
    const running = await waitFor(
      'the Machine to have a nodeRef and be Running',
      async () => {
        const m = JSON.parse(await kubectl(['get', 'machines.cluster.x-k8s.io', machineName, '-n', ns, '-o', 'json'])) as Json;
        return m.status?.nodeRef?.name && m.status?.phase === 'Running' ? m : undefined;
      },
      300_000,
    ).catch(fail);
    times.running = Date.now() - applied - times.data - times.boot - times.join;
    expect(running.status.nodeRef.name).toBe(node.metadata.name);
    expect(running.spec.providerID).toBe(providerID);
    expect(running.spec.bootstrap.configRef.name).toBe(config.metadata.name);

    // The kubelet's client certificate came through CABPK's token.
    const csrs = (await workloadApi.api.request<{ items: Obj[] }>('GET', '/apis/certificates.k8s.io/v1/certificatesigningrequests')).items;
    expect(csrs.map((c) => c.spec?.username)).toContain(`system:bootstrap:${String(cabpkToken)}`);
    console.log(
      `capi-workers times: bootstrap data ${seconds(times.data)} (MachineDeployment applied → CABPK's Secret), boot ${seconds(times.boot)} (→ kubeadm join starts), ` +
        `join ${seconds(times.join)} (→ Node registered), Running ${seconds(times.running)} (→ nodeRef, phase Running)`,
    );
    console.log(
      `capi-workers: Machine ${machineName} nodeRef ${String(running.status.nodeRef.name)}, Node spec.providerID ${String(node.spec?.providerID)} (LibvirtMachine ${providerID}), managers ${managed.map((m) => m.manager).join(',')}`,
    );
  }, 3_600_000);
});

function seconds(ms: number | undefined): string {
  return ms === undefined ? '?' : `${Math.round(ms / 1000)} s`;
}
