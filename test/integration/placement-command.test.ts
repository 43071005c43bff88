// `banlieue placement` run as a user runs it, against the real API server: two libvirt
// Providers publishing their room, VMs placed on them (one not provisioned yet), one not
// placed, and a machine a CAPI Machine would own. The objects are written as the controller
// and the provider role write them (status included); no role runs.
import { spawn } from 'node:child_process';
import { XMLParser } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { banlieueCommand } from '../support/bundles.js';
import { CORE, INFRA, TestApi, failureDomains, provider, vm, vmClass, type Obj } from '../support/fixtures.js';
import { createNamespace } from '../support/kube.js';

interface Run {
  readonly code: number | null;
  readonly out: string;
  readonly err: string;
}

async function placement(args: readonly string[]): Promise<Run> {
  const [node, command] = await banlieueCommand(['placement', '--kubeconfig', inject('kubeconfig'), ...args]);
  const child = spawn(node, command, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
  child.stderr.on('data', (d: Buffer) => (err += d.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, out, err };
}

/** A table's rows as cells: columns are three or more spaces apart, cells hold single spaces. */
const rowsOf = (table: string): string[][] =>
  table
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => line.trimEnd().split(/ {3,}/));

/** Every text of an XML document. */
function textsOf(xml: string): string[] {
  const texts: string[] = [];
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(visit);
    else if (node !== null && typeof node === 'object') {
      for (const [key, value] of Object.entries(node)) {
        if (key === '#text') texts.push(String(value));
        else if (key !== ':@') visit(value);
      }
    }
  };
  visit(new XMLParser({ preserveOrder: true, ignoreAttributes: false }).parse(xml));
  return texts;
}

describe('banlieue placement', () => {
  const t = new TestApi();
  let ns: string;
  let removeNs: () => Promise<void>;
  const cls = vmClass(`placement-${Math.random().toString(36).slice(2, 8)}`);

  /** A VM of the class (2 CPUs, 2 GiB, a 20 GiB disk of class fast) as the controller leaves it: placed on `host`, provisioned or not. */
  const placedVm = async (name: string, host: string, provisioned: boolean): Promise<void> => {
    const object = await t.apply(vm(ns, name, cls.metadata.name, 'ubuntu'));
    await t.applyStatus(object, {
      scheduled: { providerName: host, providerClass: 'libvirt', failureDomain: host },
      ...(provisioned ? { initialization: { provisioned: true } } : {}),
    });
  };

  beforeAll(async () => {
    ({ name: ns, remove: removeNs } = await createNamespace('placement'));
    await t.apply(cls);
    const room = {
      'kvm-a': { cpus: 8, memoryMiB: 16384, storage: [{ target: 'fast-store', freeGiB: 80, capacityGiB: 100 }] },
      'kvm-b': { cpus: 4, memoryMiB: 8192, freeMemoryMiB: 6144, storage: [{ target: 'fast-store', freeGiB: 10, capacityGiB: 100 }] },
    };
    for (const [host, capacity] of Object.entries(room)) {
      const p = await t.apply(provider(ns, host, 'libvirt'));
      const [fd] = failureDomains('libvirt', [{ name: host }]).failureDomains as Record<string, unknown>[];
      await t.applyStatus(p, { failureDomains: [{ ...fd, capacity }] });
    }
    await placedVm('web-1', 'kvm-a', true);
    await placedVm('web-2', 'kvm-a', true);
    await placedVm('web-3', 'kvm-b', false);
    const waiting = await t.apply(vm(ns, 'web-4', cls.metadata.name, 'ubuntu'));
    await t.applyStatus(waiting, {
      conditions: [{ type: 'Scheduled', status: 'False', reason: 'InsufficientCapacity', message: 'no room', lastTransitionTime: '2026-01-01T00:00:00Z' }],
    });
    const worker: Obj = {
      apiVersion: INFRA,
      kind: 'LibvirtMachine',
      metadata: { name: 'worker-1', namespace: ns },
      spec: {
        pool: 'fast-store',
        bootSource: { kind: 'backingVolume', volume: 'ubuntu.qcow2' },
        vcpus: 2,
        memoryMiB: 2048,
        disks: [{ name: 'os', sizeGiB: 20 }],
      },
    };
    await t.applyStatus(await t.apply(worker), { placement: { provider: 'kvm-b', failureDomain: 'kvm-b' } });
  }, 60_000);

  afterAll(async () => {
    await t.delete({ apiVersion: CORE, kind: 'VMClass', metadata: { name: cls.metadata.name } });
    await removeNs?.();
  });

  it('prints each Provider and failure domain with what is placed there next to the room it publishes, and the VMs not placed', async () => {
    const run = await placement(['-n', ns]);
    expect(run.err).toBe('');
    expect(run.code).toBe(0);
    const [domains = '', unplaced = ''] = run.out.split('\n\n');
    expect(rowsOf(domains)).toEqual([
      ['PROVIDER', 'CLASS', 'FAILURE DOMAIN', 'VMS', 'CPUS', 'MEMORY', 'STORAGE', 'PLACED'],
      ['kvm-a', 'libvirt', 'kvm-a', '2', '4/8', '4/16 GiB', 'fast-store 40/100 GiB, 80 free', 'web-1, web-2'],
      ['kvm-b', 'libvirt', 'kvm-b', '1', '2/4', '2/8 GiB, 6 free', 'fast-store 20/100 GiB, 10 free', 'web-3 (pending), LibvirtMachine/worker-1'],
    ]);
    expect(rowsOf(unplaced)).toEqual([
      ['NOT PLACED', 'REASON'],
      ['web-4', 'InsufficientCapacity'],
    ]);
  });

  it('adds the namespace of each row with -A', async () => {
    const run = await placement(['-A']);
    expect(run.code).toBe(0);
    const rows = rowsOf(run.out);
    expect(rows[0]?.slice(0, 2)).toEqual(['NAMESPACE', 'PROVIDER']);
    expect(rows.filter((r) => r[0] === ns).map((r) => r.slice(1, 4))).toEqual([
      ['kvm-a', 'libvirt', 'kvm-a'],
      ['kvm-b', 'libvirt', 'kvm-b'],
      ['web-4', 'InsufficientCapacity'],
    ]);
  });

  it('draws an SVG picture naming each failure domain, VM and machine', async () => {
    const run = await placement(['-n', ns, '-o', 'svg']);
    expect(run.code).toBe(0);
    expect(run.out.startsWith('<svg')).toBe(true);
    const texts = textsOf(run.out).join('\n');
    for (const name of ['kvm-a / kvm-a', 'kvm-b / kvm-b', 'web-1', 'web-2', 'web-3 (pending)', 'LibvirtMachine/worker-1', `namespace "${ns}"`]) {
      expect(texts).toContain(name);
    }
  });

  it('makes one HTML page holding the picture and the tables, fetching nothing', async () => {
    const run = await placement(['-n', ns, '-o', 'html']);
    expect(run.code).toBe(0);
    expect(run.out.startsWith('<!DOCTYPE html>')).toBe(true);
    expect(run.out).not.toMatch(/\b(src|href)=/);
    const texts = textsOf(run.out.replace('<!DOCTYPE html>', ''));
    expect(texts).toEqual(expect.arrayContaining(['kvm-b / kvm-b', 'web-3 (pending), LibvirtMachine/worker-1', 'web-4', 'InsufficientCapacity']));
  });
});
