// Ownership marks (ADR 16) and how a release (deletionPolicy Retain) decides from them.
import { describe, expect, it } from 'vitest';
import { isBackendError } from '../../../controller/backends/backend-error.js';
import { decideRelease, ownerMark, type VmMarks } from '../../../controller/backends/ownership.js';

const owner = { kind: 'VSphereMachine', namespace: 'vms', name: 'web-1' };
const UUID = '4b8f2c1e-7a3d-5e6f-8a9b-0c1d2e3f4a5b';
const mark = ownerMark(owner);

describe('releasing a VM', () => {
  it('removes the mark of the machine that releases it', () => {
    expect(decideRelease(owner, UUID, { owner: mark, releasedFrom: undefined })).toBe('Unmark');
  });

  it('has nothing to do when the same machine released it already (a pass that lost its finalizer write)', () => {
    expect(decideRelease(owner, UUID, { owner: undefined, releasedFrom: mark })).toBe('AlreadyReleased');
    expect(decideRelease(owner, UUID, { owner: '', releasedFrom: mark })).toBe('AlreadyReleased');
  });

  it.each<[string, VmMarks]>([
    ['carries no mark', { owner: undefined, releasedFrom: undefined }],
    ["carries another machine's mark", { owner: 'VSphereMachine/vms/web-2', releasedFrom: undefined }],
    ['was released by another machine', { owner: undefined, releasedFrom: 'VSphereMachine/other/web-1' }],
    ["is another machine's again after it was released from this one", { owner: 'VSphereMachine/vms/web-2', releasedFrom: mark }],
  ])('refuses a VM that %s (NotOwned)', (_case, marks) => {
    let error: unknown;
    try {
      decideRelease(owner, UUID, marks);
    } catch (e) {
      error = e;
    }
    expect(isBackendError(error, 'NotOwned')).toBe(true);
  });
});
