// The Proxmox REST client against the schema-held simulator: token auth, TLS,
// tasks, VM config and lifecycle, errors as typed BackendErrors, retries, and
// not one schema violation over the whole run.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BackendError } from '../../../controller/backends/backend-error.js';
import { withSignal } from '../../../controller/backends/cancellation.js';
import { sshKeysValue } from '../../../controller/backends/proxmox/client/form-encoding.js';
import { ProxmoxClient, type ProxmoxClientOptions } from '../../../controller/backends/proxmox/client/proxmox-client.js';
import type { VmRef } from '../../../controller/backends/proxmox/client/qemu.js';
import { parseUpid } from '../../../controller/backends/proxmox/client/upid.js';
import { makeServingCertificate } from '../../support/test-pki.js';
import { startProxmoxSim, type ProxmoxSim } from '../../sims/proxmox/proxmox-sim.js';

let sim: ProxmoxSim;
let options: ProxmoxClientOptions;
const clients: ProxmoxClient[] = [];
const FAST = { initialPollMs: 10, maxPollMs: 50 };
const TEMPLATE: VmRef = { node: 'pve1', vmid: 9000 };

beforeAll(async () => {
  // Shutdowns of a guest that ignores ACPI run long: the deadline test needs a task still running.
  sim = await startProxmoxSim({ taskDelayMs: { qmclone: 40, qmshutdown: 40, qmsuspend: 600_000 } });
  options = { endpoint: sim.url, caPem: sim.caPem, ...sim.token, retryDelaysMs: [5, 5, 5] };
});

afterAll(async () => {
  for (const client of clients) client.close();
  await sim?.stop();
});

function connect(overrides: Partial<ProxmoxClientOptions> = {}): ProxmoxClient {
  const client = ProxmoxClient.create({ ...options, ...overrides });
  clients.push(client);
  return client;
}

/** A fresh full clone of the template, waited for. */
async function cloneVm(client: ProxmoxClient, name: string): Promise<VmRef> {
  const newid = await client.cluster.nextId();
  await client.tasks.wait(await client.qemu.clone(TEMPLATE, { newid, name, full: true, storage: 'local-lvm' }), FAST);
  return { node: 'pve1', vmid: newid };
}

describe('Proxmox client: connection', () => {
  it('reads the version with a good token, verifying the server against the CA bundle', async () => {
    expect(await connect().cluster.version()).toMatchObject({ release: '9.1' });
  });

  it('refuses a wrong secret as Unauthorized, naming the token and never the secret', async () => {
    const secret = 'not-the-secret-42';
    const error = await connect({ tokenSecret: secret })
      .cluster.version()
      .catch((e: unknown) => e);

    expect(error).toMatchObject({ kind: 'Unauthorized', code: 'AuthenticationFailed', status: 401 });
    expect((error as Error).message).toContain('GET /version: HTTP 401 authentication failure');
    expect(`${String(error)} ${(error as Error).stack ?? ''} ${JSON.stringify(error)}`).not.toContain(secret);
  });

  it("refuses a token without the privilege as Unauthorized with PVE's permission text", async () => {
    sim.addToken({ tokenID: 'viewer@pve!ro', secret: 'viewer-secret', privileges: { '/': ['VM.Audit', 'Sys.Audit'] } });
    const viewer = connect({ tokenID: 'viewer@pve!ro', tokenSecret: 'viewer-secret' });

    await expect(viewer.qemu.clone(TEMPLATE, { newid: 4242 })).rejects.toMatchObject({
      kind: 'Unauthorized',
      code: 'PermissionDenied',
      message: expect.stringContaining('Permission check failed (/vms/9000, VM.Clone)') as unknown,
    });
  });

  it('refuses a server whose certificate another CA signed, and one checked against no bundle', async () => {
    const other = await makeServingCertificate('someone-else');

    await expect(connect({ caPem: other.caPem }).cluster.version()).rejects.toMatchObject({ kind: 'Unreachable', code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' });
    const { caPem: _ignored, ...noBundle } = options;
    await expect(ProxmoxClient.create(noBundle).cluster.version()).rejects.toMatchObject({ kind: 'Unreachable' });
  });

  it('skips verification only when insecureSkipTLSVerify is set', async () => {
    const { caPem: _ignored, ...noBundle } = options;
    expect(await connect({ ...noBundle, insecureSkipTLSVerify: true }).cluster.version()).toMatchObject({ release: '9.1' });
  });

  it('refuses bad options before any call, naming no secret', () => {
    expect(() => ProxmoxClient.create({ ...options, endpoint: 'http://127.0.0.1:8006' })).toThrow('must be https');
    expect(() => ProxmoxClient.create({ ...options, tokenID: 'root@pam' })).toThrow('is not a Proxmox API token id');
    expect(() => ProxmoxClient.create({ ...options, caPem: 'garbage' })).toThrow('caPem holds no PEM certificate');
  });

  it("stops waiting when the pass's signal aborts", async () => {
    const controller = new AbortController();
    controller.abort(new Error('role stopping'));

    await expect(withSignal(controller.signal, () => connect().cluster.version())).rejects.toThrow('role stopping');
  });

  it('reports every call to the metrics hook by method and path template', async () => {
    const calls: string[] = [];
    const client = connect({ onCall: (call, outcome) => calls.push(`${call} ${outcome}`) });

    await client.qemu.status(TEMPLATE);
    await client.qemu.status({ node: 'pve1', vmid: 999_999 }).catch(() => undefined);

    expect(calls).toEqual(['GET /nodes/{node}/qemu/{vmid}/status/current ok', 'GET /nodes/{node}/qemu/{vmid}/status/current fault']);
  });
});

describe('Proxmox client: cluster, storage and network reads', () => {
  it('lists nodes, storages, bridges and resources as PVE answers them', async () => {
    const client = connect();

    expect((await client.cluster.nodes()).map((n) => `${n.node}:${n.status}`)).toEqual(['pve1:online', 'pve2:online', 'pve3:online']);
    expect((await client.cluster.status()).find((e) => e.type === 'cluster')).toMatchObject({ name: 'banlieue-sim', quorate: true });
    expect(await client.cluster.nodeStatus('pve2')).toMatchObject({ cpuinfo: { cpus: 16 }, memory: { total: 64 * 1024 ** 3 } });
    expect((await client.storage.list('pve1', { content: 'images', enabled: true })).map((s) => `${s.storage}:${String(s.shared)}`)).toEqual([
      'local-lvm:false',
      'ceph:true',
    ]);
    expect(await client.storage.status('pve1', 'local')).toMatchObject({ content: 'iso,vztmpl,snippets,backup', active: true });
    expect((await client.storage.networks('pve1', 'any_bridge')).map((n) => n.iface)).toEqual(['vmbr0', 'vmbr1']);
    const templates = (await client.cluster.resources('vm')).filter((r) => r.template === true);
    expect(templates.map((r) => r.vmid)).toEqual(expect.arrayContaining([9000, 9001]));
  });
});

describe('Proxmox client: VM lifecycle', () => {
  it('clones a template: a UPID, then a task that completes, then the VM', async () => {
    const client = connect();
    const newid = await client.cluster.nextId();

    const upid = await client.qemu.clone(TEMPLATE, { newid, name: 'clone-a', description: 'banlieue-machine-uid=1234', full: true, storage: 'local-lvm' });

    expect(parseUpid(upid)).toMatchObject({ node: 'pve1', type: 'qmclone', id: '9000', user: 'banlieue@pve!provider' });
    expect(await client.tasks.wait(upid, FAST)).toMatchObject({ status: 'stopped', exitstatus: 'OK' });
    expect(await client.qemu.config({ node: 'pve1', vmid: newid })).toMatchObject({
      name: 'clone-a',
      description: 'banlieue-machine-uid=1234',
      scsi0: `local-lvm:vm-${newid}-disk-0,size=10G`,
    });
  });

  it('reads a task once without waiting, and gives up waiting at the deadline', async () => {
    const client = connect();
    const vm = await cloneVm(client, 'suspend-me');
    await client.tasks.wait(await client.qemu.start(vm), FAST);

    const upid = await client.qemu.suspend(vm);

    expect(await client.tasks.status(upid)).toMatchObject({ status: 'running', type: 'qmsuspend' });
    await expect(client.tasks.wait(upid, { ...FAST, timeoutMs: 50 })).rejects.toMatchObject({ kind: 'Unreachable', code: 'TaskDeadlineExceeded' });
  });

  it('reports a failed task as TaskFailed with its exit status, and the half-made clone is gone', async () => {
    const client = connect();
    const newid = await client.cluster.nextId();
    sim.failNextTask({ type: 'qmclone', exitstatus: "clone failed: lvcreate 'pve/vm-disk' error: insufficient free space" });

    const upid = await client.qemu.clone(TEMPLATE, { newid, name: 'doomed', full: true });

    await expect(client.tasks.wait(upid, FAST)).rejects.toMatchObject({
      name: 'ProxmoxTaskError',
      kind: 'TaskFailed',
      message: "task qmclone 9000 on pve1 failed: clone failed: lvcreate 'pve/vm-disk' error: insufficient free space",
    });
    await expect(client.qemu.config({ node: 'pve1', vmid: newid })).rejects.toMatchObject({ kind: 'NotFound', code: 'DoesNotExist' });
  });

  it('sets the config at once (PUT), reads it back, and refuses a stale digest', async () => {
    const client = connect();
    const vm = await cloneVm(client, 'config-me');
    const before = await client.qemu.config(vm);

    await client.qemu.setConfig(vm, {
      cores: 4,
      sockets: 1,
      memory: '4096',
      net1: 'virtio,bridge=vmbr0,tag=42',
      ipconfig1: 'ip=192.0.2.10/24,gw=192.0.2.1',
      ciuser: 'ubuntu',
      sshkeys: sshKeysValue(['ssh-ed25519 AAAAC3Nza banlieue@example']),
      tags: 'banlieue',
      smbios1: 'uuid=5c0b6c8e-4c41-4a5e-9f0e-2f1d2a3b4c5d',
      digest: before.digest,
    });
    const after = await client.qemu.config(vm);

    expect(after).toMatchObject({
      cores: 4,
      memory: '4096',
      ipconfig1: 'ip=192.0.2.10/24,gw=192.0.2.1',
      ciuser: 'ubuntu',
      tags: 'banlieue',
      smbios1: 'uuid=5c0b6c8e-4c41-4a5e-9f0e-2f1d2a3b4c5d',
    });
    expect(after.net1).toMatch(/^virtio=BC:24:11:[0-9A-F:]{8},bridge=vmbr0,tag=42$/);
    expect(decodeURIComponent(after.sshkeys ?? '')).toBe('ssh-ed25519 AAAAC3Nza banlieue@example');
    await expect(client.qemu.setConfig(vm, { cores: 2, digest: before.digest })).rejects.toMatchObject({ kind: 'Rejected', code: 'ConfigChanged' });
  });

  it('changes the config through a task (POST) when a disk is allocated', async () => {
    const client = connect();
    const vm = await cloneVm(client, 'add-disk');

    const upid = await client.qemu.configAsync(vm, { scsi1: 'local-lvm:4,iothread=1', delete: 'agent' });
    await client.tasks.wait(upid ?? '', FAST);

    const config = await client.qemu.config(vm);
    expect(config.scsi1).toBe(`local-lvm:vm-${vm.vmid}-disk-1,iothread=1,size=4G`);
    expect(config.agent).toBeUndefined();
  });

  it('grows a disk, and refuses to shrink it', async () => {
    const client = connect();
    const vm = await cloneVm(client, 'grow-me');

    await client.tasks.wait(await client.qemu.resize(vm, 'scsi0', '+6G'), FAST);

    expect((await client.qemu.config(vm)).scsi0).toBe(`local-lvm:vm-${vm.vmid}-disk-0,size=16G`);
    await expect(client.qemu.resize(vm, 'scsi0', '8G')).rejects.toMatchObject({ kind: 'Rejected', code: 'Unsupported' });
  });

  it('starts, shuts down (ACPI) and stops a VM, the status following each', async () => {
    const client = connect();
    const vm = await cloneVm(client, 'power');

    await client.tasks.wait(await client.qemu.start(vm), FAST);
    expect(await client.qemu.status(vm)).toMatchObject({ status: 'running', qmpstatus: 'running', agent: true });
    await expect(client.qemu.start(vm)).rejects.toMatchObject({ kind: 'Rejected', code: 'WrongState' });

    await client.tasks.wait(await client.qemu.shutdown(vm, { timeout: 30 }), FAST);
    expect(await client.qemu.status(vm)).toMatchObject({ status: 'stopped' });

    await client.tasks.wait(await client.qemu.start(vm), FAST);
    const guest = sim.state.vms.get(vm.vmid);
    if (guest) guest.honoursAcpi = false;
    await expect(client.tasks.wait(await client.qemu.shutdown(vm), FAST)).rejects.toMatchObject({
      kind: 'TaskFailed',
      message: expect.stringContaining('got timeout') as unknown,
    });
    await client.tasks.wait(await client.qemu.stop(vm, { 'overrule-shutdown': true }), FAST);
    expect(await client.qemu.status(vm)).toMatchObject({ status: 'stopped' });
  });

  it('resumes a paused VM', async () => {
    const client = connect();
    const vm = await cloneVm(client, 'pause');
    await client.tasks.wait(await client.qemu.start(vm), FAST);
    const guest = sim.state.vms.get(vm.vmid);
    if (guest) guest.qmpstatus = 'paused';

    await client.tasks.wait(await client.qemu.resume(vm), FAST);

    expect(await client.qemu.status(vm)).toMatchObject({ status: 'running', qmpstatus: 'running' });
  });

  it('reads the addresses the guest agent reports once the VM runs', async () => {
    const client = connect();
    const vm = await cloneVm(client, 'agent');
    await expect(client.qemu.agentInterfaces(vm)).rejects.toMatchObject({ kind: 'Rejected', code: 'WrongState' });
    const guest = sim.state.vms.get(vm.vmid);
    if (guest) guest.agent.addresses = [{ ip: '198.51.100.7', prefix: 24 }];

    await client.tasks.wait(await client.qemu.start(vm), FAST);
    const interfaces = await client.qemu.agentInterfaces(vm);

    expect(interfaces.find((i) => i.name === 'eth0')?.['ip-addresses']).toEqual([{ 'ip-address': '198.51.100.7', 'ip-address-type': 'ipv4', prefix: 24 }]);
  });

  it('deletes a stopped VM with purge: the VM and its disks are gone', async () => {
    const client = connect();
    const vm = await cloneVm(client, 'delete-me');

    await client.tasks.wait(await client.qemu.delete(vm, { purge: true, 'destroy-unreferenced-disks': true }), FAST);

    await expect(client.qemu.config(vm)).rejects.toMatchObject({ kind: 'NotFound', code: 'DoesNotExist' });
    expect(await client.storage.content('pve1', 'local-lvm', { vmid: vm.vmid })).toEqual([]);
  });

  it('uploads a seed ISO, lists it and deletes it', async () => {
    const client = connect();

    await client.tasks.wait(
      await client.storage.upload({ node: 'pve2', storage: 'local', content: 'iso', filename: 'banlieue-seed.iso' }, Buffer.alloc(2048, 1)),
      FAST,
    );
    expect(await client.storage.content('pve2', 'local', { content: 'iso' })).toEqual([
      expect.objectContaining({ volid: 'local:iso/banlieue-seed.iso', size: 2048 }),
    ]);

    const upid = await client.storage.deleteVolume('pve2', 'local', 'local:iso/banlieue-seed.iso');
    await client.tasks.wait(upid ?? '', FAST);
    expect(await client.storage.content('pve2', 'local', { content: 'iso' })).toEqual([]);
  });
});

describe('Proxmox client: races, faults and retries', () => {
  it('fails the clone of an id another writer took after nextid with AlreadyExists; a new nextid works', async () => {
    const client = connect();
    sim.state.stealNextIds = 1;
    const taken = await client.cluster.nextId();

    await expect(client.qemu.clone(TEMPLATE, { newid: taken, name: 'racer' })).rejects.toMatchObject({ kind: 'Rejected', code: 'AlreadyExists' });
    await expect(client.cluster.nextId(taken)).rejects.toMatchObject({ kind: 'Rejected', fieldErrors: { vmid: `VM ${taken} already exists` } });

    const next = await client.cluster.nextId();
    expect(next).not.toBe(taken);
    await client.tasks.wait(await client.qemu.clone(TEMPLATE, { newid: next, name: 'racer' }), FAST);
  });

  it('retries a read after 5xx answers and gets the answer', async () => {
    const client = connect();
    sim.injectFault({ call: 'GET /version', status: 503, times: 2 });
    sim.injectFault({ call: 'GET /version', status: 500, reason: 'got timeout', times: 1 });
    const before = sim.requests.filter((r) => r.template === '/version').length;

    expect(await client.cluster.version()).toMatchObject({ release: '9.1' });
    expect(sim.requests.filter((r) => r.template === '/version').length - before).toBe(4);
  });

  it('does not repeat a POST PVE may have run, but does one pveproxy could not hand on', async () => {
    const client = connect();
    const vm = await cloneVm(client, 'no-double-start');
    const before = sim.requests.length;
    const starts = (): number => sim.requests.slice(before).filter((r) => r.template === '/nodes/{node}/qemu/{vmid}/status/start').length;

    sim.injectFault({ call: 'POST /nodes/{node}/qemu/{vmid}/status/start', status: 500, reason: 'got timeout' });
    await expect(client.qemu.start(vm)).rejects.toMatchObject({ kind: 'Unreachable', code: 'HTTP500' });
    expect(starts()).toBe(1);

    sim.injectFault({ call: 'POST /nodes/{node}/qemu/{vmid}/status/start', status: 503 });
    await client.tasks.wait(await client.qemu.start(vm), FAST);
    expect(starts()).toBe(3);
  });

  it('reports a node that went offline as Unreachable', async () => {
    const client = connect();
    sim.state.setNodeOnline('pve3', false);
    try {
      await expect(client.cluster.nodeStatus('pve3')).rejects.toMatchObject({ kind: 'Unreachable', status: 595 });
      expect((await client.cluster.nodes()).find((n) => n.node === 'pve3')?.status).toBe('offline');
    } finally {
      sim.state.setNodeOnline('pve3', true);
    }
  });

  it('made no call the PVE schema refuses and got no answer off it over the whole run', () => {
    expect(sim.violations).toEqual([]);
  });
});

describe('Proxmox client: PVE parameter errors', () => {
  let strict: ProxmoxSim;

  beforeAll(async () => {
    strict = await startProxmoxSim({ nodes: ['pve1'] });
  });

  afterAll(async () => {
    await strict?.stop();
  });

  it('surfaces a 400 field by field as Rejected, in the message and in fieldErrors', async () => {
    const client = connect({ endpoint: strict.url, caPem: strict.caPem, ...strict.token });

    const error = await client.qemu.setConfig(TEMPLATE, { net0: 'virtio,bridge=vmbr0,tag=9999', ipconfig0: 'ip=10.0.0.300/24' }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(BackendError);
    expect(error).toMatchObject({ kind: 'Rejected', code: 'ParameterVerificationFailed', status: 400 });
    const { fieldErrors, message } = error as { fieldErrors: Record<string, string>; message: string };
    expect(Object.keys(fieldErrors).sort()).toEqual(['ipconfig0', 'net0']);
    expect(fieldErrors.net0).toContain('net0.tag: value must have a maximum value of 4094');
    expect(message).toMatch(/^PUT \/nodes\/\{node\}\/qemu\/\{vmid\}\/config: HTTP 400 Parameter verification failed\.: (ipconfig0|net0): invalid format/);
    expect(strict.violations).toHaveLength(1);
  });
});
