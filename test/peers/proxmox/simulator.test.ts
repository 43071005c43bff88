// The Proxmox simulator holds requests and answers to PVE's API schema: what
// the schema refuses gets PVE's 400 with its `errors` body and is recorded as
// a violation; its own answers validate against `returns`.
import { request } from 'node:https';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadPveApiSchema } from '../../support/proxmox/apidata.js';
import { waitFor } from '../../support/wait.js';
import { checkValue } from '../../sims/proxmox/pve-validate.js';
import { startProxmoxSim, type ProxmoxSim } from '../../sims/proxmox/proxmox-sim.js';

let sim: ProxmoxSim;

beforeAll(async () => {
  sim = await startProxmoxSim();
});

afterAll(async () => {
  await sim?.stop();
});

beforeEach(() => sim.clearRecords());

interface RawAnswer {
  readonly status: number;
  readonly reason: string;
  readonly body: { data?: unknown; errors?: Record<string, string> } | undefined;
}

/** One request as any HTTP client would send it, form-encoded, with the default token unless told otherwise. */
function raw(method: string, path: string, params: Record<string, string> = {}, authorization?: string): Promise<RawAnswer> {
  const form = new URLSearchParams(params).toString();
  const inQuery = method === 'GET' || method === 'DELETE';
  const url = new URL(`/api2/json${path}${inQuery && form ? `?${form}` : ''}`, sim.url);
  const headers: Record<string, string> = { Authorization: authorization ?? `PVEAPIToken=${sim.token.tokenID}=${sim.token.tokenSecret}` };
  if (!inQuery) headers['Content-Type'] = 'application/x-www-form-urlencoded';
  return new Promise((resolve, reject) => {
    const req = request(url, { method, ca: sim.caPem, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, reason: res.statusMessage ?? '', body: text === '' ? undefined : (JSON.parse(text) as RawAnswer['body']) });
      });
    });
    req.on('error', reject);
    req.end(inQuery ? undefined : form);
  });
}

const CLONE = '/nodes/pve1/qemu/9000/clone';
const CONFIG = '/nodes/pve1/qemu/9000/config';

interface Refusal {
  readonly what: string;
  readonly path: string;
  readonly params: Record<string, string>;
  readonly field: string;
  readonly error: string;
}

describe('Proxmox simulator: requests the schema refuses', () => {
  it.each<Refusal>([
    {
      what: 'an unknown parameter',
      path: CLONE,
      params: { newid: '150', fullclone: '1' },
      field: 'fullclone',
      error: 'property is not defined in schema and the schema does not allow additional properties',
    },
    { what: 'a wrong type', path: CLONE, params: { newid: 'abc' }, field: 'newid', error: "type check ('integer') failed - got 'abc'" },
    { what: 'a wrong boolean', path: CLONE, params: { newid: '150', full: 'maybe' }, field: 'full', error: "type check ('boolean') failed - got 'maybe'" },
    { what: 'a missing required parameter', path: CLONE, params: { name: 'x' }, field: 'newid', error: 'property is missing and it is not optional' },
    {
      what: 'a value outside the enum',
      path: CLONE,
      params: { newid: '150', format: 'vdi' },
      field: 'format',
      error: "value 'vdi' does not have a value in the enumeration 'raw', 'qcow2', 'vmdk'",
    },
    {
      what: 'a value below the minimum',
      path: CLONE,
      params: { newid: '99' },
      field: 'newid',
      error: 'invalid format - value does not look like a valid VM ID',
    },
    {
      what: 'a bad named format (dns-name)',
      path: CLONE,
      params: { newid: '150', name: 'not_a_dns_name!' },
      field: 'name',
      error: "invalid format - value 'not_a_dns_name!' does not look like a valid DNS name",
    },
    {
      what: 'an index past the last net[n]',
      path: CONFIG,
      params: { net32: 'virtio,bridge=vmbr0' },
      field: 'net32',
      error: 'property is not defined in schema and the schema does not allow additional properties',
    },
  ])('refuses $what with 400 and the field in errors', async ({ path, params, field, error }) => {
    const answer = await raw('POST', path, params);

    expect(answer.status).toBe(400);
    expect(answer.reason).toBe('Parameter verification failed.');
    expect(answer.body?.errors?.[field]).toBe(error);
    expect(sim.violations).toEqual([expect.objectContaining({ kind: 'request', errors: expect.objectContaining({ [field]: error }) })]);
  });

  it.each([
    { what: 'a nested value over its maximum', key: 'net0', value: 'virtio,bridge=vmbr0,tag=9999', error: 'net0.tag: value must have a maximum value of 4094' },
    { what: 'an unknown nested key', key: 'net0', value: 'virtio,bridge=vmbr0,speed=10', error: 'invalid key in comma-separated list property: speed' },
    { what: 'a missing nested default key', key: 'net0', value: 'bridge=vmbr0', error: 'net0.model: property is missing and it is not optional' },
    { what: 'a nested enum', key: 'scsi1', value: 'local-lvm:8,cache=fast', error: "scsi1.cache: value 'fast' does not have a value in the enumeration" },
    { what: 'a bad ipconfig address', key: 'ipconfig0', value: 'ip=10.0.0.300/24,gw=10.0.0.1', error: 'ip: value does not look like a valid CIDR network' },
    { what: 'an unknown ipconfig key', key: 'ipconfig0', value: 'ip=dhcp,dns=1.1.1.1', error: 'dns: property is not defined in schema' },
    { what: 'a bad smbios1 uuid', key: 'smbios1', value: 'uuid=not-a-uuid', error: 'uuid: value does not look like a valid UUID' },
    { what: 'sshkeys not urlencoded', key: 'sshkeys', value: 'ssh-ed25519 AAAA user@host', error: 'invalid urlencoded string' },
    { what: 'a bad tag', key: 'tags', value: 'ok;not ok!', error: "invalid tag 'ok!'" },
  ])('refuses $what inside a property string', async ({ key, value, error }) => {
    const answer = await raw('PUT', CONFIG, { [key]: value });

    expect(answer.status).toBe(400);
    const message = answer.body?.errors?.[key] ?? '';
    expect(message).toMatch(/^invalid format - /);
    expect(message).toContain(error);
    expect(sim.violations).toHaveLength(1);
  });

  it('accepts what PVE accepts: a NIC by model alias, a new disk, booleans as yes/no', async () => {
    const vmid = String(await nextFreeVm());
    const answer = await raw('PUT', `/nodes/pve1/qemu/${vmid}/config`, {
      net1: 'virtio=BC:24:11:00:00:01,bridge=vmbr1,tag=7',
      scsi1: 'local-lvm:2,iothread=1,discard=on',
      onboot: 'yes',
      memory: '4096',
    });

    expect(answer).toMatchObject({ status: 200, body: { data: null } });
    expect(sim.violations).toEqual([]);
  });

  it('answers a path the schema does not have with 501 and records it', async () => {
    const answer = await raw('GET', '/nodes/pve1/qemu/9000/no-such-thing');

    expect(answer.status).toBe(501);
    expect(sim.violations).toEqual([expect.objectContaining({ kind: 'path', call: 'GET /nodes/pve1/qemu/9000/no-such-thing' })]);
  });

  it('answers a schema path it does not simulate with 501 and no violation', async () => {
    const answer = await raw('GET', '/nodes/pve1/qemu/9000/snapshot');

    expect(answer.status).toBe(501);
    expect(answer.reason).toContain('not simulated');
    expect(sim.violations).toEqual([]);
  });
});

describe('Proxmox simulator: tokens and privileges', () => {
  it('answers 401 to a wrong secret and to no token', async () => {
    expect(await raw('GET', '/version', {}, `PVEAPIToken=${sim.token.tokenID}=wrong`)).toMatchObject({ status: 401, reason: 'authentication failure' });
    expect(await raw('GET', '/version', {}, '')).toMatchObject({ status: 401, reason: 'No ticket' });
  });

  it('answers 403 naming the path and privilege the token lacks', async () => {
    sim.addToken({ tokenID: 'auditor@pve!ro', secret: 'ro-secret', privileges: { '/': ['VM.Audit', 'Sys.Audit'] } });
    const auditor = 'PVEAPIToken=auditor@pve!ro=ro-secret';

    expect(await raw('GET', '/nodes/pve1/qemu/9000/status/current', {}, auditor)).toMatchObject({ status: 200 });
    expect(await raw('POST', CLONE, { newid: '150' }, auditor)).toMatchObject({ status: 403, reason: 'Permission check failed (/vms/9000, VM.Clone)' });
  });
});

describe('Proxmox simulator: answers and cluster behaviour', () => {
  it('answers every simulated read within the schema', async () => {
    for (const path of [
      '/version',
      '/nodes',
      '/nodes/pve1/status',
      '/cluster/status',
      '/cluster/resources',
      '/cluster/nextid',
      '/nodes/pve1/storage',
      '/nodes/pve1/storage/local/status',
      '/nodes/pve1/storage/local-lvm/content',
      '/nodes/pve1/network',
      '/nodes/pve1/qemu',
      '/nodes/pve1/qemu/9000/config',
      '/nodes/pve1/qemu/9000/status/current',
    ]) {
      expect((await raw('GET', path)).status, path).toBe(200);
    }
    expect(sim.violations).toEqual([]);
  });

  it('catches an answer off the schema (its answer check is not a no-op)', () => {
    const returns = loadPveApiSchema().method('/nodes/{node}/qemu/{vmid}/status/current', 'GET')?.returns ?? {};

    expect(checkValue({ vmid: 'x', status: 'paused', ha: {}, invented: 1 }, returns, 'json')).toEqual({
      vmid: "type check ('integer') failed - got 'x'",
      status: "value 'paused' does not have a value in the enumeration 'stopped', 'running'",
      invented: 'property is not defined in schema and the schema does not allow additional properties',
    });
  });

  it('runs a task asynchronously and fails the next one on demand', async () => {
    const vmid = await nextFreeVm();
    sim.failNextTask({ type: 'qmstart', exitstatus: 'start failed: QEMU exited with code 1' });
    const started = await raw('POST', `/nodes/pve1/qemu/${vmid}/status/start`);
    const upid = String(started.body?.data);

    const status = await waitFor('the start task to stop', async () => {
      const answer = await raw('GET', `/nodes/pve1/tasks/${encodeURIComponent(upid)}/status`);
      const data = answer.body?.data as { status: string; exitstatus?: string };
      return data.status === 'stopped' ? data : undefined;
    });

    expect(status.exitstatus).toBe('start failed: QEMU exited with code 1');
    expect(sim.state.vms.get(vmid)?.status).toBe('stopped');
  });

  it('answers 595 for a node that went offline and lists it offline', async () => {
    sim.state.setNodeOnline('pve3', false);
    try {
      expect(await raw('GET', '/nodes/pve3/status')).toMatchObject({ status: 595 });
      const nodes = (await raw('GET', '/nodes')).body?.data as { node: string; status: string }[];
      expect(nodes.find((n) => n.node === 'pve3')?.status).toBe('offline');
    } finally {
      sim.state.setNodeOnline('pve3', true);
    }
  });

  it('lets a foreign writer take the id nextid handed out (the race)', async () => {
    sim.state.stealNextIds = 1;
    const id = Number((await raw('GET', '/cluster/nextid')).body?.data);

    const clone = await raw('POST', CLONE, { newid: String(id) });

    expect(clone.status).toBe(500);
    expect(clone.reason).toBe(`VM ${id} already exists on node 'pve1'`);
    expect((await raw('GET', '/cluster/nextid', { vmid: String(id) })).body?.errors).toEqual({ vmid: `VM ${id} already exists` });
  });

  it('holds every request unanswered while paused and answers it once resumed (a frozen pveproxy)', async () => {
    sim.pause();
    let answered = false;
    const version = raw('GET', '/version').finally(() => (answered = true));
    try {
      // No deadline is asserted: whatever the load, a held request cannot have been answered.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(answered).toBe(false);
      expect(sim.requests).toEqual([]);
    } finally {
      sim.resume();
    }
    expect(await version).toMatchObject({ status: 200 });
  });
});

/** A stopped, unlocked VM made for the test. */
async function nextFreeVm(): Promise<number> {
  const vmid = sim.state.nextFreeId();
  sim.state.addVm({ vmid, node: 'pve1', name: `scratch-${vmid}` });
  return vmid;
}
