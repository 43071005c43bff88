import { describe, expect, it } from 'vitest';
import { computePlacementView } from '../../../../controller/cli/placement/placement-view.js';
import { failureDomain, provider } from '../../scheduler/fixtures.js';
import { C1, C1_ROOM, C2, capiMachine, objects, placed, unplaced } from './fixtures.js';

const GIB = 1024;

describe('banlieue placement view', () => {
  it('has a row per published failure domain, with its room, sorted by Provider and failure domain', () => {
    const view = computePlacementView(objects({ virtualMachines: [] }));
    expect(view.rows.map((r) => [r.provider, r.backend, r.failureDomain, r.published])).toEqual([
      ['kvm-a', 'libvirt', 'kvm-a', true],
      ['vcenter-a', 'vsphere', 'vcenter-a-dc1-c1', true],
      ['vcenter-a', 'vsphere', 'vcenter-a-dc1-c2', true],
    ]);
    expect(view.rows[1]?.capacity).toEqual(C1_ROOM);
  });

  it('adds up what the VMs placed in a failure domain ask for, as the scheduler counts it (class disks resolved there)', () => {
    const view = computePlacementView(objects());
    const c1 = view.rows.find((r) => r.failureDomain === C1[1]);
    expect(c1?.vms.map((vm) => [vm.name, vm.provisioned])).toEqual([
      ['db-1', false],
      ['web-1', true],
      ['web-2', true],
    ]);
    expect(c1?.placed).toEqual({ vms: 3, cpus: 6, memoryMiB: 12 * GIB, storageGiB: new Map([['ds-ssd', 120]]), unknown: 0 });
  });

  it.each([
    ['a failure domain the Provider no longer publishes', placed('old-1', ['vcenter-a', 'vcenter-a-dc9-gone']), 'vcenter-a', 'vsphere'],
    ['a Provider that is gone', placed('old-2', ['vcenter-z', 'vcenter-z-dc1-c1']), 'vcenter-z', ''],
  ])('keeps a VM placed on %s, in a row of its own marked not published', (_, vm, providerName, backend) => {
    const view = computePlacementView(objects({ virtualMachines: [vm] }));
    const row = view.rows.find((r) => r.vms.some((v) => v.name === vm.metadata.name));
    expect(row).toMatchObject({ provider: providerName, backend, failureDomain: vm.status?.scheduled?.failureDomain, published: false });
    expect(row?.capacity).toBeUndefined();
  });

  it('counts a VM whose class is missing, but leaves it out of the sums (unknown)', () => {
    const view = computePlacementView(objects({ virtualMachines: [placed('web-1', C1), placed('odd-1', C1, { classRef: 'gone' })] }));
    expect(view.rows.find((r) => r.failureDomain === C1[1])?.placed).toMatchObject({ vms: 2, cpus: 2, memoryMiB: 4 * GIB, unknown: 1 });
  });

  it('lists the VMs not placed yet with their Scheduled reason', () => {
    const view = computePlacementView(objects({ virtualMachines: [unplaced('web-9', 'InsufficientCapacity'), unplaced('web-3')] }));
    expect(view.unplaced).toEqual([
      { namespace: 'team-a', name: 'web-3', reason: 'NotScheduledYet' },
      { namespace: 'team-a', name: 'web-9', reason: 'InsufficientCapacity' },
    ]);
  });

  it("shows a CAPI Machine's infrastructure machine where it was created, and a VirtualMachine's machine only as that VM", () => {
    const view = computePlacementView(
      objects({
        virtualMachines: [placed('web-1', C2)],
        machines: [capiMachine('VSphereMachine', 'md-0-abc', C2), capiMachine('VSphereMachine', 'web-1', C2, 'VirtualMachine')],
      }),
    );
    const c2 = view.rows.find((r) => r.failureDomain === C2[1]);
    expect(c2?.machines).toEqual(['VSphereMachine/md-0-abc']);
    expect(c2?.vms.map((vm) => vm.name)).toEqual(['web-1']);
  });

  it('tells namespaces apart: a Provider of the same name in another namespace is another row', () => {
    const kvm = provider('kvm-a', { backend: 'libvirt', failureDomains: [failureDomain('kvm-a')] });
    const other = { ...kvm, metadata: { name: 'kvm-a', namespace: 'team-b' } };
    const view = computePlacementView(objects({ providers: [kvm, other], virtualMachines: [] }));
    expect(view.rows.map((r) => `${r.namespace}/${r.provider}/${r.failureDomain}`)).toEqual(['team-a/kvm-a/kvm-a', 'team-b/kvm-a/kvm-a']);
  });
});
