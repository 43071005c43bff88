import { describe, expect, it } from 'vitest';
import type { FailureDomainCapacity, FailureDomainStatus, Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { VirtualMachine } from '../../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import { Reason } from '../../../infra/api/conditions.js';
import { schedule, type ScheduleResult } from '../../../controller/scheduler/schedule.js';
import { provider, scheduleInput, virtualMachine, vmClass, vsphereDomain } from './fixtures.js';

const ROOMY: FailureDomainCapacity = { cpus: 32, memoryMiB: 262144, freeMemoryMiB: 131072, storage: [{ target: 'ds-ssd', freeGiB: 2000 }] };

/** A vSphere failure domain dc1/<cluster> of vcenter-a publishing `capacity`. */
function domain(cluster: string, capacity?: FailureDomainCapacity): FailureDomainStatus {
  return { ...vsphereDomain('vcenter-a', 'dc1', cluster), ...(capacity ? { capacity } : {}) };
}

function vcenter(...failureDomains: FailureDomainStatus[]): Provider {
  return provider('vcenter-a', { failureDomains });
}

function where(result: ScheduleResult): string {
  if (!result.ok) throw new Error(`not placed: ${result.reason}: ${result.message}`);
  return result.placement.failureDomain.name;
}

/** A VM of the default class (2 CPUs, 4 GiB, one 40 GiB disk on class fast → ds-ssd) placed in dc1/<cluster>, provisioned or not. */
function placedVm(name: string, cluster: string, props: { provisioned?: boolean; labels?: Record<string, string> } = {}): VirtualMachine {
  const vm = virtualMachine(name, { scheduledOn: ['vcenter-a', `vcenter-a-dc1-${cluster}`], ...(props.labels ? { labels: props.labels } : {}) });
  return { ...vm, status: { ...vm.status, ...(props.provisioned ? { initialization: { provisioned: true } } : {}) } };
}

const classOf = (): ReturnType<typeof vmClass> => vmClass('standard');

describe('VirtualMachine scheduling by capacity', () => {
  describe('filtering', () => {
    it.each([
      [
        'a datastore without room',
        { ...ROOMY, storage: [{ target: 'ds-ssd', freeGiB: 39 }] },
        'storage ds-ssd on Provider vcenter-a: 39 GiB free, 40 GiB needed',
      ],
      ['hosts without the memory', { ...ROOMY, memoryMiB: 2048, freeMemoryMiB: 2048 }, 'memory on Provider vcenter-a: 2 GiB in total, 4 GiB needed'],
      ['hosts with fewer CPUs than the VM', { ...ROOMY, cpus: 1 }, 'host CPUs on Provider vcenter-a: 1 logical CPUs, 2 virtual CPUs needed'],
    ])('leaves out %s and names the resource in the Scheduled message', (_, full, why) => {
      const result = schedule(scheduleInput({ providers: [vcenter(domain('c1', full), domain('c2', ROOMY))] }));
      expect(where(result)).toBe('vcenter-a-dc1-c2');
      expect(result.ok && result.placement.explanation).toContain(`without room: vcenter-a/vcenter-a-dc1-c1: ${why}`);
    });

    it('ranks by free memory but never leaves a VM out for it: hypervisors overcommit memory', () => {
      const busy = { ...ROOMY, freeMemoryMiB: 0 };
      expect(where(schedule(scheduleInput({ providers: [vcenter(domain('c1', busy), domain('c2', ROOMY))] })))).toBe('vcenter-a-dc1-c2');
      expect(where(schedule(scheduleInput({ providers: [vcenter(domain('c1', busy))] })))).toBe('vcenter-a-dc1-c1');
    });

    it('marks Scheduled False with InsufficientCapacity, naming each failure domain and its scarce resource, when none has room', () => {
      const result = schedule(
        scheduleInput({
          providers: [vcenter(domain('c1', { ...ROOMY, storage: [{ target: 'ds-ssd', freeGiB: 0 }] }), domain('c2', { ...ROOMY, memoryMiB: 1024 }))],
        }),
      );
      expect(result).toEqual({
        ok: false,
        reason: Reason.InsufficientCapacity,
        message:
          'No failure domain has room for the VM: vcenter-a/vcenter-a-dc1-c1: storage ds-ssd on Provider vcenter-a: 0 GiB free, 40 GiB needed; vcenter-a/vcenter-a-dc1-c2: memory on Provider vcenter-a: 1 GiB in total, 4 GiB needed',
      });
    });

    it('ranks by the room left once siblings placed there and not yet provisioned are taken off, but not provisioned ones (the published figures show those)', () => {
      const tight = { ...ROOMY, storage: [{ target: 'ds-ssd', freeGiB: 80 }] };
      const providers = [vcenter(domain('c1', tight), domain('c2', { ...ROOMY, storage: [{ target: 'ds-ssd', freeGiB: 50 }] }))];
      const inFlight = [placedVm('web-0', 'c1'), placedVm('web-1', 'c1')];
      expect(where(schedule(scheduleInput({ providers, siblings: inFlight, classOf })))).toBe('vcenter-a-dc1-c2');
      const done = inFlight.map((vm) => ({ ...vm, status: { ...vm.status, initialization: { provisioned: true } } }));
      expect(where(schedule(scheduleInput({ providers, siblings: done, classOf })))).toBe('vcenter-a-dc1-c1');
    });

    it('filters on the published figures alone: siblings not yet provisioned only rank (thin disks take less than their size)', () => {
      const providers = [vcenter(domain('c1', { ...ROOMY, storage: [{ target: 'ds-ssd', freeGiB: 40 }] }))];
      const result = schedule(scheduleInput({ providers, siblings: [placedVm('web-0', 'c1')], classOf }));
      expect(where(result)).toBe('vcenter-a-dc1-c1');
      expect(result.ok && result.placement.explanation).toContain('storage ds-ssd 40 GiB free less 40 GiB placed');
    });

    it('never keeps a VM out for a resource the Provider does not publish', () => {
      const result = schedule(scheduleInput({ providers: [vcenter(domain('c1', { storage: [{ target: 'ds-other', freeGiB: 0 }] }))] }));
      expect(where(result)).toBe('vcenter-a-dc1-c1');
    });
  });

  describe('scoring', () => {
    it('prefers the failure domain with room for the most VMs like this one, whatever the names, and says so', () => {
      const result = schedule(
        scheduleInput({
          providers: [vcenter(domain('c1', { ...ROOMY, freeMemoryMiB: 16384 }), domain('c2', ROOMY), domain('c3', { ...ROOMY, freeMemoryMiB: 65536 }))],
        }),
      );
      expect(where(result)).toBe('vcenter-a-dc1-c2');
      expect(result.ok && result.placement.explanation).toBe(
        'room for 31 more like it (memory 128 GiB free, storage ds-ssd 2000 GiB free); best of 3 that fit (next: vcenter-a/vcenter-a-dc1-c3, room for 15 more like it (memory 64 GiB free, storage ds-ssd 2000 GiB free))',
      );
    });

    it('ranks a failure domain that publishes no capacity after those that do, and breaks equal scores by name', () => {
      expect(where(schedule(scheduleInput({ providers: [vcenter(domain('c1'), domain('c2', ROOMY))] })))).toBe('vcenter-a-dc1-c2');
      expect(where(schedule(scheduleInput({ providers: [vcenter(domain('c2', ROOMY), domain('c1', ROOMY))] })))).toBe('vcenter-a-dc1-c1');
    });

    it('keeps the place this process chose a moment ago while it fits, though another now scores better', () => {
      const providers = [vcenter(domain('c1', { ...ROOMY, freeMemoryMiB: 16384 }), domain('c2', ROOMY))];
      const decided = { providerName: 'vcenter-a', failureDomain: 'vcenter-a-dc1-c1' };
      expect(where(schedule(scheduleInput({ providers, decided })))).toBe('vcenter-a-dc1-c1');
      const full = [vcenter(domain('c1', { ...ROOMY, storage: [{ target: 'ds-ssd', freeGiB: 0 }] }), domain('c2', ROOMY))];
      expect(where(schedule(scheduleInput({ providers: full, decided })))).toBe('vcenter-a-dc1-c2');
    });
  });

  describe('topology spread', () => {
    const app = { app: 'web' };
    const spreadVm = (name: string, maxSkew: number): VirtualMachine =>
      virtualMachine(name, { labels: app, placement: { topologySpread: [{ maxSkew, topologyKey: 'name', labelSelector: { matchLabels: app } }] } });

    /** Places `count` VMs one after another, each seeing the ones before; the count per failure domain. */
    function placeInTurn(count: number, maxSkew: number, domains: FailureDomainStatus[]): Record<string, number> {
      const siblings: VirtualMachine[] = [];
      for (let i = 0; i < count; i++) {
        const vm = spreadVm(`web-${i}`, maxSkew);
        const fd = where(schedule(scheduleInput({ vm, providers: [vcenter(...domains)], siblings, classOf })));
        siblings.push({ ...vm, status: { scheduled: { providerName: 'vcenter-a', providerClass: 'vsphere', failureDomain: fd } } });
      }
      const counts: Record<string, number> = {};
      for (const s of siblings) counts[s.status?.scheduled?.failureDomain ?? ''] = (counts[s.status?.scheduled?.failureDomain ?? ''] ?? 0) + 1;
      return counts;
    }

    it('spreads 10 VMs of one app over 3 failure domains within maxSkew 1, though one has far more room', () => {
      const roomier = { ...ROOMY, freeMemoryMiB: 1048576, storage: [{ target: 'ds-ssd', freeGiB: 20000 }] };
      expect(placeInTurn(10, 1, [domain('c1', ROOMY), domain('c2', roomier), domain('c3', ROOMY)])).toEqual({
        'vcenter-a-dc1-c1': 3,
        'vcenter-a-dc1-c2': 4,
        'vcenter-a-dc1-c3': 3,
      });
    });

    it('lets room decide within maxSkew: with maxSkew 3 the roomiest failure domain takes more', () => {
      const roomier = { ...ROOMY, freeMemoryMiB: 1048576, storage: [{ target: 'ds-ssd', freeGiB: 20000 }] };
      const counts = placeInTurn(10, 3, [domain('c1', ROOMY), domain('c2', roomier), domain('c3', ROOMY)]);
      const values = Object.values(counts);
      expect(Math.max(...values) - Math.min(...values)).toBeLessThanOrEqual(3);
      expect(counts['vcenter-a-dc1-c2']).toBeGreaterThan(4);
    });

    it('counts only the VMs its labelSelector matches, and says the skew in the explanation', () => {
      const others = [placedVm('db-0', 'c1', { labels: { app: 'db' } }), placedVm('db-1', 'c1', { labels: { app: 'db' } })];
      const mine = [placedVm('web-0', 'c2', { labels: app })];
      const result = schedule(
        scheduleInput({ vm: spreadVm('web-1', 1), providers: [vcenter(domain('c1', ROOMY), domain('c2', ROOMY))], siblings: [...others, ...mine] }),
      );
      expect(where(result)).toBe('vcenter-a-dc1-c1');
      expect(result.ok && result.placement.explanation).toContain('skew 1 (maxSkew 1) over name');
    });
  });
});
