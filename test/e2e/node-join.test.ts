// A banlieue libvirt guest becomes a Kubernetes node. Two clusters, as in
// Cluster API. The management cluster is the suite's shared control plane,
// holding banlieue's objects. The workload cluster is a control plane of this
// test's own, made joinable as kubeadm makes one (joinable-control-plane.ts).
//
// `banlieue controller` and `banlieue provider libvirt` run as processes
// against a private libvirtd whose QEMU driver boots the node image
// (test/tools/node-image.sh) under TCG. The image is imported into a pool
// and published by a VMImage. The guest sits on a libvirt network inside
// namespaces this test creates (qemu-host.ts). There, the network's gateway
// address serves the workload API server's loopback port
// (listen-in-namespace.ts). Nothing is dialled outside loopback and those
// namespaces.
//
// The VirtualMachine's user-data is a Jinja cloud-config running `kubeadm
// join` with a bootstrap token and the CA hash. It takes the node name and
// the kubelet's provider-id from the meta-data banlieue writes, as CABPK's
// templates do (infra/clusterctl/cluster-templates.ts). The outcome is read
// from the workload API server: a Node the kubelet registered, whose
// spec.providerID equals the LibvirtMachine's and is owned by the kubelet's
// field manager, and that goes Ready. This test writes no Node.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { GUEST_LIBVIRT_NETWORK } from '../peers/libvirt/qemu-host.js';
import { buildKubeTools, buildNodeKubeadm } from '../support/control-plane.js';
import { controllerArgs, startRole, type RoleProcess } from '../support/controller-process.js';
import { CORE, TestApi, machineRef, vm, type Obj } from '../support/fixtures.js';
import type { JoinCommand } from '../support/joinable-control-plane.js';
import { createNamespace } from '../support/kube.js';
import { libvirtProviderArgs } from '../support/libvirt/env.js';
import { GUEST_API_PORT, startGuestWorkload, type GuestWorkload } from '../support/libvirt/guest-workload.js';
import { startTcgHost, tcgProviderObjects, type TcgHost } from '../support/libvirt/tcg-host.js';
import { ensureNodeImage, nodeVmImage } from '../support/node-image.js';
import { waitFor } from '../support/wait.js';

/** TCG on a shared 2-core machine (measured idle: boot 59 s, join 19 s, Ready 3 s); busy, many times that. */
const BOOT_TIMEOUT_MS = 600_000;
const JOIN_TIMEOUT_MS = 600_000;
const READY_TIMEOUT_MS = 300_000;
const POOL = 'nodes';
const IMAGE = 'kubernetes-node.qcow2';
const NODE_NAME = 'node-1';
/** Lines the user-data prints on the serial console around `kubeadm join`. */
const MARK = 'banlieue-node-join:';

/** A cloud-config (a Jinja template, rendered by cloud-init against the NoCloud meta-data) that joins the node. */
function joinUserData(command: JoinCommand): string {
  const joinConfiguration = {
    apiVersion: 'kubeadm.k8s.io/v1beta4',
    kind: 'JoinConfiguration',
    discovery: { bootstrapToken: { apiServerEndpoint: command.endpoint, token: command.token, caCertHashes: [command.caCertHash] } },
    nodeRegistration: {
      name: '{{ ds.meta_data.local_hostname }}',
      criSocket: 'unix:///var/run/containerd/containerd.sock',
      kubeletExtraArgs: [{ name: 'provider-id', value: '{{ ds.meta_data.provider_id }}' }],
    },
    // kubeadm's defaults (4-5 min) are short for a kubelet starting under TCG on a busy machine.
    timeouts: { discovery: '10m', tlsBootstrap: '10m', kubeletHealthCheck: '10m' },
  };
  const cloudConfig = {
    write_files: [{ path: '/run/kubeadm/join.yaml', permissions: '0600', content: stringify(joinConfiguration) }],
    runcmd: [
      // The kubelet's and containerd's journal on the serial console, for the failure message.
      ['sh', '-c', 'journalctl -b -f -o short-monotonic -u kubelet -u containerd > /dev/console 2>&1 &'],
      ['sh', '-c', `echo ${MARK} start; if kubeadm join --config /run/kubeadm/join.yaml 2>&1; then echo ${MARK} joined; else echo ${MARK} failed; fi`],
    ],
  };
  return `## template: jinja\n#cloud-config\n${stringify(cloudConfig)}`;
}

const t = new TestApi();

describe('a libvirt guest from the node image joins a control plane', () => {
  const times: Record<string, number> = {};
  let tcg: TcgHost;
  let workload: GuestWorkload;
  let ns: string;
  let removeNs: () => Promise<void>;
  let controller: RoleProcess;
  let provider: RoleProcess;
  const suffix = Math.random().toString(36).slice(2, 7);
  const vmClass: Obj = {
    apiVersion: CORE,
    kind: 'VMClass',
    metadata: { name: `tcg-node-${suffix}` },
    spec: {
      // kubeadm's preflight wants 2 CPUs only of a control plane; the kubelet and containerd want the memory.
      hardware: { cpus: 2, memoryMiB: 2048, disks: [{ name: 'os', sizeGiB: 8, storageClass: 'local' }] },
      network: { interfaces: [{ name: 'eth0', networkClass: 'lan' }] },
    },
  };
  const vmImage = nodeVmImage(suffix, IMAGE);

  beforeAll(async () => {
    const imageLookup = Date.now();
    const image = await ensureNodeImage();
    times.image = Date.now() - imageLookup;
    tcg = await startTcgHost(POOL, { file: image.disk, name: IMAGE });
    workload = await startGuestWorkload(await buildKubeTools(), tcg.host, await buildNodeKubeadm());

    ({ name: ns, remove: removeNs } = await createNamespace('node-join'));
    for (const obj of [...tcgProviderObjects(ns, tcg.host, POOL), vmClass, vmImage]) await t.apply(obj);
    controller = await startRole(controllerArgs(inject('kubeconfig'), ns));
    provider = await startRole(libvirtProviderArgs(ns));
  }, 1_800_000);

  afterAll(async () => {
    // The VM first, while the provider runs to destroy its domain and take its finalizer off.
    if (ns) {
      await t.delete(vm(ns, NODE_NAME, '', '')).catch(() => undefined);
      await t.gone(vm(ns, NODE_NAME, '', ''), 180_000).catch(() => undefined);
    }
    await controller?.stop();
    await provider?.stop();
    for (const obj of [vmClass, vmImage]) await t.delete(obj).catch(() => undefined);
    await tcg?.client.close();
    await workload?.listener.stop();
    await tcg?.host.stop();
    await workload?.plane.stop();
    await removeNs?.();
  }, 300_000);

  const consoleOf = (domainName: string): string => {
    try {
      return readFileSync(join(tcg.host.qemuLogDir, `${domainName}-console.log`), 'utf8');
    } catch {
      return '';
    }
  };
  const failure = (error: unknown, domainName: string): Error =>
    new Error(
      [
        String(error),
        `console: ${consoleOf(domainName).slice(-6000)}`,
        `kube-apiserver: ${workload.plane.logTail('kube-apiserver', 15)}`,
        `kube-controller-manager: ${workload.plane.logTail('kube-controller-manager', 15)}`,
        `provider: ${provider.logs().slice(-2000)}`,
      ].join('\n'),
    );

  it('registers the guest’s kubelet as a Node with the LibvirtMachine’s providerID, and the Node goes Ready', async () => {
    // The control plane is joinable: cluster-info, readable by anyone, names the guests' address and is signed for the token.
    const clusterInfo = await workload.plane.clusterInfo();
    expect(clusterInfo.data?.kubeconfig).toContain(`server: https://${GUEST_LIBVIRT_NETWORK.gateway}:${GUEST_API_PORT}`);
    expect(workload.join.endpoint).toBe(`${GUEST_LIBVIRT_NETWORK.gateway}:${GUEST_API_PORT}`);

    const vmApplied = Date.now();
    await t.apply({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'node-user-data', namespace: ns },
      stringData: { 'user-data': joinUserData(workload.join) },
    });
    await t.apply(vm(ns, NODE_NAME, vmClass.metadata.name, vmImage.metadata.name, { userData: { secretRef: { name: 'node-user-data' } } }));
    const domainName = `${ns}-${NODE_NAME}`;
    const fail = (error: unknown): never => {
      throw failure(error, domainName);
    };
    const machine = await t.exists(machineRef('libvirt', ns, NODE_NAME), (o) => typeof o.spec?.providerID === 'string', 120_000).catch(fail);
    const providerID = machine.spec?.providerID as string;
    expect(providerID).toMatch(/^libvirt:\/\/[0-9a-f-]{36}$/);

    // Booted: cloud-init has reached the user-data's runcmd.
    await waitFor('the guest to start kubeadm join', () => consoleOf(domainName).includes(`${MARK} start`) || undefined, BOOT_TIMEOUT_MS).catch(fail);
    times.boot = Date.now() - vmApplied;

    // Joined: the kubelet, after its TLS bootstrap, registered its Node.
    const path = { apiVersion: 'v1', kind: 'Node', metadata: { name: NODE_NAME } };
    const registered = await waitFor(
      'the Node to be registered',
      async () => {
        if (consoleOf(domainName).includes(`${MARK} failed`)) throw new Error('kubeadm join failed');
        return workload.api.get(path);
      },
      JOIN_TIMEOUT_MS,
    ).catch(fail);
    times.join = Date.now() - vmApplied - times.boot;

    const ready = await waitFor(
      'the Node to be Ready',
      async () => {
        const node = await workload.api.get(path);
        const condition = (node?.status?.conditions as { type: string; status: string; reason: string }[] | undefined)?.find((c) => c.type === 'Ready');
        return condition?.status === 'True' ? node : undefined;
      },
      READY_TIMEOUT_MS,
    ).catch(fail);
    times.ready = Date.now() - vmApplied - times.boot - times.join;
    // kubeadm join itself ended well (it waits for the kubelet's TLS bootstrap, then exits).
    await waitFor('kubeadm join to end', () => (consoleOf(domainName).includes(`${MARK} joined`) ? true : undefined), JOIN_TIMEOUT_MS).catch(fail);
    console.log(
      `node-join times: image ${seconds(times.image)} (node-image.sh), boot ${seconds(times.boot)} (VirtualMachine applied → kubeadm join starts), ` +
        `join ${seconds(times.join)} (→ Node registered), Ready ${seconds(times.ready)} (→ Ready=True)`,
    );

    expect(registered.metadata.uid).toBe(ready.metadata.uid);
    expect(ready.spec?.providerID).toBe(providerID);
    // The kubelet wrote spec.providerID (its own field manager), and nothing of this test's wrote the Node.
    const { managedFields: managed = [] } = ready.metadata as { managedFields?: { manager: string; fieldsV1?: { 'f:spec'?: Record<string, unknown> } }[] };
    expect(managed.find((m) => m.fieldsV1?.['f:spec']?.['f:providerID'] !== undefined)?.manager).toBe('kubelet');
    expect(managed.map((m) => m.manager).filter((m) => m.startsWith('banlieue'))).toEqual([]);
    expect((ready.status?.conditions as { type: string; reason: string }[]).find((c) => c.type === 'Ready')?.reason).toBe('KubeletReady');
    // Its addresses: the lease the guest took on the libvirt network.
    const addresses = ready.status?.addresses as { type: string; address: string }[];
    expect(addresses.find((a) => a.type === 'InternalIP')?.address).toMatch(
      new RegExp(`^${GUEST_LIBVIRT_NETWORK.gateway.replace(/\.1$/, '').replaceAll('.', '\\.')}\\.\\d+$`),
    );

    // The kubelet's client certificate came through the bootstrap token: a CSR by the token's
    // user, approved by kube-controller-manager and signed by the cluster CA.
    const tokenId = workload.join.token.split('.')[0];
    const csrs = (await workload.api.api.request<{ items: Obj[] }>('GET', '/apis/certificates.k8s.io/v1/certificatesigningrequests')).items;
    const bootstrap = csrs.find((c) => c.spec?.username === `system:bootstrap:${tokenId}`);
    expect(bootstrap?.spec?.signerName).toBe('kubernetes.io/kube-apiserver-client-kubelet');
    expect((bootstrap?.status?.conditions as { type: string; reason: string }[] | undefined)?.map((c) => `${c.type}/${c.reason}`)).toEqual([
      'Approved/AutoApproved',
    ]);
    expect(typeof bootstrap?.status?.certificate).toBe('string');
    console.log(
      `node-join: Node ${NODE_NAME} spec.providerID ${String(ready.spec?.providerID)} (LibvirtMachine ${providerID}), managers ${managed.map((m) => m.manager).join(',')}, CSR ${String(bootstrap?.metadata.name)} by ${String(bootstrap?.spec?.username)}`,
    );
  }, 3_600_000);
});

function seconds(ms: number | undefined): string {
  return ms === undefined ? '?' : `${Math.round(ms / 1000)} s`;
}
