// Which neighbours a VM's change sends back to the scheduler: only those
// waiting on others (found by an index of the VM cache), and only when the
// change is one they can see.
import { describe, expect, it } from 'vitest';
import type { VirtualMachine } from '../../../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import { neighboursToRecheck, WAITING_ON_NEIGHBOURS, waitingOnNeighbours } from '../../../../controller/reconcilers/virtual-machine/neighbours.js';
import { CacheIndex } from '../../../../controller/runtime/cache-index.js';
import { keyOf } from '../../../../controller/runtime/informer.js';
import { aVm } from './fixtures.js';

const NOW = '2026-11-30T12:00:00Z';
const condition = (type: string, status: 'True' | 'False', reason: string) => ({ type, status, reason, message: '', lastTransitionTime: NOW });

function named(name: string, status?: VirtualMachine['status'], labels?: Record<string, string>): VirtualMachine {
  const vm = aVm({}, { name, uid: `uid-${name}`, ...(labels ? { labels } : {}) });
  return status ? { ...vm, status } : vm;
}

const placed = { providerName: 'vcsim', providerClass: 'vsphere' as const, failureDomain: 'dc0-c0', scheduledAt: NOW };
const unschedulable = named('blocked', { conditions: [condition('Scheduled', 'False', 'Unschedulable')] });
const duplicate = named('dup', { conditions: [condition('Scheduled', 'True', 'Scheduled'), condition('Ready', 'False', 'DuplicateAddress')] });
const provisioning = named('busy', {
  scheduled: placed,
  conditions: [condition('Scheduled', 'True', 'Scheduled'), condition('Ready', 'False', 'Provisioning')],
});
const fresh = named('fresh');
const namespace = [unschedulable, duplicate, provisioning, fresh];
const names = (vms: VirtualMachine[]): string[] => vms.map((vm) => vm.metadata.name ?? '');

describe('neighboursToRecheck', () => {
  const vm = named('me', { scheduled: placed, conditions: [condition('Scheduled', 'True', 'Scheduled')] });

  it('rechecks only the neighbours refused a placement or held back by an address when a placement changes', () => {
    const before = named('me', { conditions: [condition('Scheduled', 'False', 'Scheduling')] });
    expect(names(neighboursToRecheck([...namespace, vm], vm, before))).toEqual(['blocked', 'dup']);
  });

  it('rechecks nobody after a status write neighbours cannot see (a burst of creations stays linear)', () => {
    const before = { ...vm, status: { ...vm.status, conditions: [condition('Ready', 'False', 'Provisioning')] } };
    expect(neighboursToRecheck(namespace, vm, before)).toEqual([]);
  });

  it('rechecks on labels, deletion, spec and held addresses', () => {
    const changes: VirtualMachine[] = [
      { ...vm, metadata: { ...vm.metadata, labels: { tier: 'db' } } },
      { ...vm, metadata: { ...vm.metadata, deletionTimestamp: NOW } },
      { ...vm, metadata: { ...vm.metadata, generation: 2 } },
      { ...vm, status: { ...vm.status, heldAddresses: [{ networkClass: 'lan', interface: 'eth0', address: '10.0.0.5' }] } },
    ];
    for (const changed of changes) expect(names(neighboursToRecheck(namespace, changed, vm))).toEqual(['blocked', 'dup']);
  });

  it('a VM added or deleted without a placement frees or takes nothing; with one, it does', () => {
    expect(neighboursToRecheck(namespace, fresh)).toEqual([]);
    expect(names(neighboursToRecheck(namespace, provisioning))).toEqual(['blocked', 'dup']);
  });

  it('never lists the VM itself', () => {
    const blockedToo = named('me', { scheduled: placed, conditions: [condition('Scheduled', 'False', 'Unschedulable')] });
    expect(names(neighboursToRecheck([blockedToo, unschedulable], blockedToo))).toEqual(['blocked']);
  });
});

describe('the index of VMs waiting on their neighbours', () => {
  it('files a VM while it waits on neighbours, and takes it out once it is placed, or gone', () => {
    const store = new CacheIndex<VirtualMachine>();
    store.addIndex(WAITING_ON_NEIGHBOURS, waitingOnNeighbours);
    const waiting = (): string[] => names(store.byIndex(WAITING_ON_NEIGHBOURS, 'team-a'));
    for (const vm of namespace) store.set(keyOf(vm), vm);
    expect(waiting()).toEqual(['blocked', 'dup']);
    store.set('team-a/blocked', named('blocked', provisioning.status));
    store.set('team-a/fresh', named('fresh', unschedulable.status));
    expect(waiting()).toEqual(['dup', 'fresh']);
    store.delete('team-a/dup');
    expect(waiting()).toEqual(['fresh']);
  });
});
