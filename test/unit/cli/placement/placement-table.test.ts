import { describe, expect, it } from 'vitest';
import { alignColumns, toPlacementCells, toPlacementTable, toUnplacedCells } from '../../../../controller/cli/placement/placement-table.js';
import { computePlacementView } from '../../../../controller/cli/placement/placement-view.js';
import { C1, C2, capiMachine, objects, placed } from './fixtures.js';

const view = computePlacementView(objects({ machines: [capiMachine('VSphereMachine', 'md-0-abc', C2)] }));
const cellsOf = (provider: string, failureDomain: string): string[] | undefined =>
  toPlacementCells(view, { allNamespaces: false }).find((r) => r[0] === provider && r[2] === failureDomain);

describe('banlieue placement table', () => {
  it('heads its columns as kubectl does', () => {
    expect(toPlacementCells(view, { allNamespaces: false })[0]).toEqual(['PROVIDER', 'CLASS', 'FAILURE DOMAIN', 'VMS', 'CPUS', 'MEMORY', 'STORAGE', 'PLACED']);
    expect(toPlacementCells(view, { allNamespaces: true })[0]?.[0]).toBe('NAMESPACE');
  });

  it.each([
    [
      'a failure domain publishing every figure: placed next to published, free after it, pending VMs said',
      'vcenter-a',
      'vcenter-a-dc1-c1',
      ['3', '6/32', '12/256 GiB, 128 free', 'ds-hdd 0/1000 GiB, 900 free; ds-ssd 120/2000 GiB, 1500 free', 'db-1 (pending), web-1, web-2'],
    ],
    [
      'a failure domain publishing no free memory nor storage, with a CAPI machine',
      'vcenter-a',
      'vcenter-a-dc1-c2',
      ['0', '0/16', '0/64 GiB', '-', 'VSphereMachine/md-0-abc'],
    ],
    ['a libvirt host with nothing placed', 'kvm-a', 'kvm-a', ['0', '0/8', '0/16 GiB', 'ds-ssd 0/100 GiB, 90 free', '-']],
  ])('shows %s', (_, provider, failureDomain, cells) => {
    expect(cellsOf(provider, failureDomain)?.slice(3)).toEqual(cells);
  });

  it('marks a failure domain no longer published, with no figure to compare', () => {
    const gone = computePlacementView(objects({ virtualMachines: [placed('old-1', ['vcenter-a', 'vcenter-a-dc9-gone'])] }));
    const row = toPlacementCells(gone, { allNamespaces: false }).find((r) => r[0] === 'vcenter-a' && r[2]?.startsWith('vcenter-a-dc9-gone'));
    expect(row).toEqual(['vcenter-a', 'vsphere', 'vcenter-a-dc9-gone (not published)', '1', '2/-', '4/- GiB', 'ds-ssd 40/- GiB', 'old-1']);
  });

  it("marks sums that leave out a VM whose class is missing with '+'", () => {
    const partial = computePlacementView(objects({ virtualMachines: [placed('web-1', C1), placed('odd-1', C1, { classRef: 'gone' })] }));
    const row = toPlacementCells(partial, { allNamespaces: false }).find((r) => r[2] === C1[1]);
    expect(row?.slice(3, 6)).toEqual(['2', '2+/32', '4+/256 GiB, 128 free']);
  });

  it('lists the VMs not placed with their reason, namespace first with -A', () => {
    expect(toUnplacedCells(view, { allNamespaces: true })).toEqual([
      ['NAMESPACE', 'NOT PLACED', 'REASON'],
      ['team-a', 'web-9', 'InsufficientCapacity'],
    ]);
  });

  it('aligns columns three spaces apart, the last unpadded', () => {
    expect(
      alignColumns([
        ['A', 'BB', 'C'],
        ['aaaa', 'b', 'c'],
      ]),
    ).toBe('A      BB   C\naaaa   b    c\n');
  });

  it('says when there is nothing to show, and where it looked', () => {
    const empty = computePlacementView({ providers: [], virtualMachines: [], vmClasses: [], machines: [] });
    expect(toPlacementTable(empty, { allNamespaces: false }, 'namespace "team-z"')).toBe('No Providers or VirtualMachines found in namespace "team-z".\n');
  });
});
