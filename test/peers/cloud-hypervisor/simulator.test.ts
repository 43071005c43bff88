// The VMM simulator itself: it refuses what the spec does not allow, answering as v53.0
// does, records each refusal as a violation, and behaves as a process like the real
// VMM (one instance per socket, stale sockets replaced, exit on guest power-off).
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VmmClient } from '../../../controller/backends/cloud-hypervisor/client/vmm-client.js';
import { launchVmm, readViolations, simulatorPeer, type ChildVmm } from './vmm-peers.js';

interface RawAnswer {
  readonly status: number;
  readonly body: string;
}

function rawCall(socketPath: string, method: string, path: string, body?: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const headers = body === undefined ? {} : { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) };
    const req = request({ socketPath, method, path, headers, agent: false }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('VMM simulator requests', () => {
  let dir: string;
  let socketPath: string;
  let vmm: ChildVmm;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'banlieue-ch-sim-'));
    socketPath = join(dir, 'api.sock');
    vmm = await launchVmm(simulatorPeer.binary(dir), socketPath);
  }, 90_000);

  afterAll(async () => {
    await vmm?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    ['not JSON', '{"payload":', 'Unexpected end of JSON input'],
    [
      'a field the spec does not name',
      '{"payload":{"kernel":"/k"},"cpu":{"boot_vcpus":1,"max_vcpus":1}}',
      'VmConfig must NOT have additional properties (cpu)',
    ],
    ['a nested unknown field', '{"payload":{"kernel":"/k","kernal":"/k"}}', 'VmConfig/payload must NOT have additional properties (kernal)'],
    ['a wrong type', '{"payload":{"kernel":"/k"},"memory":{"size":"1G"}}', 'VmConfig/memory/size must be integer'],
    ['no required payload', '{"cpus":{"boot_vcpus":1,"max_vcpus":1}}', "VmConfig must have required property 'payload'"],
    ['a value outside an enum', '{"payload":{"kernel":"/k"},"serial":{"mode":"Bogus"}}', 'VmConfig/serial/mode must be equal to one of the allowed values'],
    ['an array where an object belongs', '[]', 'VmConfig must be object'],
  ])('refuses a vm.create body with %s as 400 "Failed to deserialize JSON" and records it', async (_what, body, problem) => {
    const before = readViolations(dir).length;
    const answer = await rawCall(socketPath, 'PUT', '/api/v1/vm.create', body);
    expect(answer.status).toBe(400);
    const chain = JSON.parse(answer.body) as string[];
    expect(chain[0]).toBe('Failed to deserialize JSON');
    expect(chain.join('\n')).toContain(problem);
    const violations = readViolations(dir);
    expect(violations).toHaveLength(before + 1);
    expect(violations.at(-1)).toMatchObject({ method: 'PUT', path: '/api/v1/vm.create' });
    expect(violations.at(-1)?.problems.join('\n')).toContain(problem);
    // Nothing was created.
    expect((await rawCall(socketPath, 'GET', '/api/v1/vm.info')).status).toBe(404);
  });

  it.each([
    ['an empty vm.create body', 'PUT', '/api/v1/vm.create', '', 400, ''],
    ['a vm.resize with a string', 'PUT', '/api/v1/vm.resize', '{"desired_vcpus":"a"}', 400, 'VmResize/desired_vcpus must be integer'],
    ['a path the spec does not have', 'GET', '/api/v1/vm.nonexistent', undefined, 404, '["Not Found"]'],
    ['a path outside the API', 'GET', '/other', undefined, 404, '["Not Found"]'],
    ['a method the path does not take', 'GET', '/api/v1/vm.boot', undefined, 400, '["Bad Request"]'],
    ['a method the VMM does not serve', 'POST', '/api/v1/vm.boot', undefined, 400, 'Invalid HTTP Method'],
    ['a spec operation the simulator lacks', 'PUT', '/api/v1/vm.nmi', undefined, 500, 'is not simulated'],
  ])('answers %s as v53.0 does and records it', async (_what, method, path, body, status, text) => {
    const before = readViolations(dir).length;
    const answer = await rawCall(socketPath, method, path, body);
    expect(answer.status).toBe(status);
    expect(answer.body).toContain(text);
    expect(readViolations(dir)).toHaveLength(before + 1);
  });

  it('serves the violations it recorded at GET /_sim/violations', async () => {
    const answer = await rawCall(socketPath, 'GET', '/_sim/violations');
    expect(JSON.parse(answer.body)).toEqual(readViolations(dir));
  });

  it('records nothing for a valid request', async () => {
    const before = readViolations(dir).length;
    expect((await rawCall(socketPath, 'PUT', '/api/v1/vm.create', '{"payload":{"firmware":"/fw"}}')).status).toBe(204);
    expect((await rawCall(socketPath, 'PUT', '/api/v1/vm.delete')).status).toBe(204);
    expect(readViolations(dir)).toHaveLength(before);
  });
});

describe('VMM simulator process', () => {
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'banlieue-ch-simproc-'));
  });

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses to serve a socket another live VMM answers on, and replaces a stale one', async () => {
    const socketPath = join(dir, 'one.sock');
    const binary = simulatorPeer.binary(dir);
    const first = await launchVmm(binary, socketPath);
    try {
      const second = spawnSync(binary, ['--api-socket', `path=${socketPath}`], { encoding: 'utf8', timeout: 60_000 });
      expect(second.status).toBe(1);
      expect(second.stderr).toContain('is already in use by another running instance');
    } finally {
      await first.kill();
    }
    expect(existsSync(socketPath)).toBe(true);
    const third = await launchVmm(binary, socketPath);
    await third.kill();
  });

  it('exits 0 and removes its socket when an ACPI guest powers off on the power button', async () => {
    const socketPath = join(dir, 'acpi.sock');
    const vmm = await launchVmm(simulatorPeer.binary(dir, { guest: 'acpi' }), socketPath);
    try {
      const client = new VmmClient({ socketPath });
      await client.createVm({ payload: { firmware: process.execPath } });
      await client.bootVm();
      await client.powerButton();
      expect(await vmm.exited).toBe(0);
      expect(existsSync(socketPath)).toBe(false);
    } finally {
      await vmm.kill();
    }
  });

  it('stays up with --no-shutdown when the guest powers off, its VM back to Created', async () => {
    const socketPath = join(dir, 'noshut.sock');
    const vmm = await launchVmm(simulatorPeer.binary(dir, { guest: 'acpi' }), socketPath, ['--no-shutdown']);
    try {
      const client = new VmmClient({ socketPath });
      await client.createVm({ payload: { firmware: process.execPath } });
      await client.bootVm();
      await client.powerButton();
      await expect.poll(async () => (await client.vmInfo()).state, { timeout: 30_000 }).toBe('Created');
    } finally {
      await vmm.kill();
    }
    expect(readViolations(dir)).toEqual([]);
  });
});
