// Clone targets are looked up once per session and placement for a while:
// concurrent clones share the lookup in flight; a failure or a clone that
// could not start is not remembered.
import { describe, expect, it } from 'vitest';
import type { VsphereClient } from '../../../../controller/backends/vsphere/client/vsphere-client.js';
import { CloneTargetCache, type ResolvedClone } from '../../../../controller/backends/vsphere/machine/clone-target-cache.js';
import type { VSphereMachineSpec } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/vsphere-machine.js';

const session = (): VsphereClient => ({}) as VsphereClient;
const spec = (template = 'ubuntu'): VSphereMachineSpec => ({ template, numCpus: 2, memoryMiB: 2048 }) as VSphereMachineSpec;
const RAW = { datacenter: 'DC0', cluster: 'C0' };
const TEMPLATES = { virtualMachines: false };

function counting(result: () => Promise<ResolvedClone> = () => Promise.resolve({} as ResolvedClone)) {
  const calls: string[] = [];
  let clock = 0;
  const cache = new CloneTargetCache({
    ttlMs: 1000,
    now: () => clock,
    lookup: (_client, s, raw, source) => {
      calls.push(`${raw.datacenter}/${raw.cluster}/${s.template}${source.virtualMachines ? ' (VMs too)' : ''}`);
      return result();
    },
  });
  return { cache, calls, advance: (ms: number) => void (clock += ms) };
}

describe('CloneTargetCache', () => {
  it('shares one lookup between concurrent and later clones of the same placement, until it expires', async () => {
    const { cache, calls, advance } = counting();
    const client = session();
    await Promise.all(Array.from({ length: 10 }, () => cache.resolve(client, spec(), RAW, TEMPLATES)));
    advance(999);
    await cache.resolve(client, spec(), RAW, TEMPLATES);
    expect(calls).toEqual(['DC0/C0/ubuntu']);
    advance(1);
    await cache.resolve(client, spec(), RAW, TEMPLATES);
    expect(calls).toHaveLength(2);
  });

  it('looks up again for another template, failure domain or session', async () => {
    const { cache, calls } = counting();
    const client = session();
    await cache.resolve(client, spec(), RAW, TEMPLATES);
    await cache.resolve(client, spec('debian'), RAW, TEMPLATES);
    await cache.resolve(client, spec(), { datacenter: 'DC0', cluster: 'C1' }, TEMPLATES);
    await cache.resolve(session(), spec(), RAW, TEMPLATES);
    expect(calls).toEqual(['DC0/C0/ubuntu', 'DC0/C0/debian', 'DC0/C1/ubuntu', 'DC0/C0/ubuntu']);
  });

  it("looks up again, templates only, once the Provider's opt-in to cloning VMs is withdrawn", async () => {
    const { cache, calls } = counting();
    const client = session();
    await cache.resolve(client, spec(), RAW, { virtualMachines: true });
    await cache.resolve(client, spec(), RAW, TEMPLATES);
    expect(calls).toEqual(['DC0/C0/ubuntu (VMs too)', 'DC0/C0/ubuntu']);
  });

  it('does not remember a failed lookup', async () => {
    let fail = true;
    const { cache, calls } = counting(() => (fail ? Promise.reject(new Error('no template "ubuntu"')) : Promise.resolve({} as ResolvedClone)));
    const client = session();
    await expect(cache.resolve(client, spec(), RAW, TEMPLATES)).rejects.toThrow('no template');
    fail = false;
    await expect(cache.resolve(client, spec(), RAW, TEMPLATES)).resolves.toEqual({});
    expect(calls).toHaveLength(2);
  });

  it('forgets a placement whose clone could not start', async () => {
    const { cache, calls } = counting();
    const client = session();
    await cache.resolve(client, spec(), RAW, TEMPLATES);
    cache.forget(client, spec(), RAW, TEMPLATES);
    await cache.resolve(client, spec(), RAW, TEMPLATES);
    expect(calls).toHaveLength(2);
  });
});
