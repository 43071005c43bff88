// The pure parts of create-if-absent and owned updates: the hand-over of our
// create's managedFields entry, and telling a field-manager conflict from a
// failed precondition. The writes themselves run against the real API server
// (test/integration/user-data-secret.test.ts).
import { describe, expect, it } from 'vitest';
import { ApiStatusError } from '../../../controller/runtime/kube-api.js';
import { handedToApply, isFieldManagerConflict, isUidMismatch, type ManagedFieldsEntry } from '../../../controller/runtime/server-side-apply.js';

const ME = 'banlieue.io/controller';

const entry = (manager: string, operation: string, fieldsV1: Record<string, unknown>, extra: Partial<ManagedFieldsEntry> = {}): ManagedFieldsEntry => ({
  manager,
  operation,
  apiVersion: 'v1',
  fieldsType: 'FieldsV1',
  fieldsV1,
  ...extra,
});

describe('handing our create over to our apply', () => {
  it('turns our Update entry into our Apply entry and leaves the others', () => {
    const other = entry('kubectl-edit', 'Update', { 'f:metadata': { 'f:annotations': {} } });
    const created = entry(ME, 'Update', { 'f:data': { '.': {}, 'f:value': {} }, 'f:type': {} });
    expect(handedToApply([created, other], ME)).toEqual([other, { ...created, operation: 'Apply' }]);
  });

  it('merges it into the Apply entry we already have', () => {
    const applied = entry(ME, 'Apply', { 'f:spec': { 'f:numCpus': {} } });
    const created = entry(ME, 'Update', { 'f:spec': { 'f:memoryMiB': {} }, 'f:metadata': { 'f:labels': {} } });
    expect(handedToApply([applied, created], ME)).toEqual([
      { ...applied, fieldsV1: { 'f:spec': { 'f:numCpus': {}, 'f:memoryMiB': {} }, 'f:metadata': { 'f:labels': {} } } },
    ]);
  });

  it.each<[string, ManagedFieldsEntry[]]>([
    ['no entry of ours', [entry('kubectl-create', 'Update', {})]],
    ['only our Apply entry', [entry(ME, 'Apply', {})]],
    ['only our status entry', [entry(ME, 'Update', {}, { subresource: 'status' })]],
  ])('has nothing to hand over with %s', (_, entries) => {
    expect(handedToApply(entries, ME)).toBeUndefined();
  });
});

describe('refused applies', () => {
  const status = (body: unknown, code = 409): ApiStatusError => new ApiStatusError(code, JSON.stringify(body), 'PATCH /api/v1/namespaces/a/secrets/b');

  it.each<[string, ApiStatusError, boolean]>([
    [
      'a field another manager owns',
      status({
        reason: 'Conflict',
        message: 'Apply failed with 1 conflict: conflict with "kubectl-edit" using v1: .data.value',
        details: { causes: [{ reason: 'FieldManagerConflict', field: '.data.value' }] },
      }),
      true,
    ],
    ['a uid precondition', status({ reason: 'Conflict', message: 'Operation cannot be fulfilled on secrets "b": uid mismatch' }), false],
    ['a body that is not a Status', new ApiStatusError(409, 'conflict', 'PATCH'), false],
    ['another code', status({ details: { causes: [{ reason: 'FieldManagerConflict' }] } }, 422), false],
  ])('tells %s', (_, err, expected) => {
    expect(isFieldManagerConflict(err)).toBe(expected);
  });

  it.each<[string, ApiStatusError, boolean]>([
    [
      'an object gone since it was read',
      status({ reason: 'Conflict', message: 'uid mismatch: the provided object specified uid 0a, and no existing object was found' }),
      true,
    ],
    [
      'an object replaced since it was read',
      status({ reason: 'Invalid', details: { causes: [{ reason: 'FieldValueInvalid', field: 'metadata.uid', message: 'field is immutable' }] } }, 422),
      true,
    ],
    ['a field another manager owns', status({ reason: 'Conflict', details: { causes: [{ reason: 'FieldManagerConflict', field: '.data.value' }] } }), false],
    ['an invalid spec', status({ reason: 'Invalid', details: { causes: [{ reason: 'FieldValueInvalid', field: 'spec.numCpus' }] } }, 422), false],
  ])('takes %s for a uid mismatch: %s', (_, err, expected) => {
    expect(isUidMismatch(err)).toBe(expected);
  });
});
