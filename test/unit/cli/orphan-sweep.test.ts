// How a provider role judges a machine mark found on its backend before a sweep.
import { describe, expect, it } from 'vitest';
import { judgeMark } from '../../../controller/cli/orphan-sweep.js';
import { parseOwnerMark } from '../../../controller/backends/cloud-hypervisor/machine/sweep.js';

const cached = new Set(['vms/web-1']);
const judge = judgeMark('CloudHypervisorMachine', 'vms', (key) => cached.has(key));

describe('machine marks before a sweep', () => {
  it.each([
    ['its machine is in the cache', 'CloudHypervisorMachine/vms/web-1', 'Owned'],
    ['its machine is gone', 'CloudHypervisorMachine/vms/web-2', 'Orphaned'],
    ['it names another namespace', 'CloudHypervisorMachine/other/web-2', 'Foreign'],
    ['it names another kind', 'LibvirtMachine/vms/web-2', 'Foreign'],
  ])('a mark is judged when %s', (_why, mark, judgement) => {
    const owner = parseOwnerMark(mark);
    expect(owner && judge(owner)).toBe(judgement);
  });

  it('judges every namespace for a role that watches all', () => {
    expect(judgeMark('CloudHypervisorMachine', undefined, () => false)({ kind: 'CloudHypervisorMachine', namespace: 'other', name: 'x' })).toBe('Orphaned');
  });

  it.each(['', 'CloudHypervisorMachine/vms', 'a/b/c/d', '/vms/x'])('reads no owner from the malformed mark "%s"', (mark) => {
    expect(parseOwnerMark(mark)).toBeUndefined();
  });
});
