import { describe, expect, it } from 'vitest';
import { LAST_APPLIED_ANNOTATION, toCached } from '../../../controller/runtime/cached-object.js';
import type { KubeObject } from '../../../controller/runtime/informer.js';

const managedFields = [{ manager: 'kubectl', operation: 'Apply', fieldsV1: { 'f:spec': {} } }];

describe('What the informer caches of an object', () => {
  it.each<[string, KubeObject, KubeObject]>([
    ['drops managedFields', { metadata: { name: 'vm-a', managedFields } as KubeObject['metadata'] }, { metadata: { name: 'vm-a' } }],
    [
      "drops kubectl's last-applied annotation and keeps the others",
      { metadata: { name: 'vm-a', annotations: { [LAST_APPLIED_ANNOTATION]: '{"spec":{}}', 'team.example/owner': 'ops' } } },
      { metadata: { name: 'vm-a', annotations: { 'team.example/owner': 'ops' } } },
    ],
    [
      'leaves no empty annotations behind, as the API server shows none',
      { metadata: { name: 'vm-a', annotations: { [LAST_APPLIED_ANNOTATION]: '{}' } } },
      { metadata: { name: 'vm-a' } },
    ],
    [
      'keeps an object with neither as it is',
      { metadata: { name: 'vm-a', labels: { app: 'web' }, annotations: { 'team.example/owner': 'ops' } } },
      { metadata: { name: 'vm-a', labels: { app: 'web' }, annotations: { 'team.example/owner': 'ops' } } },
    ],
  ])('%s', (_, listed, cached) => {
    expect(toCached(listed)).toEqual(cached);
  });
});
