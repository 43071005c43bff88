// Which Secrets a namespace's hosts may read: the user-data of its machines still
// to be created, by name; none is no rule at all (an empty resourceNames is every name).
import { describe, expect, it } from 'vitest';
import type { InfraMachine } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/infra-machine.js';
import { hostReadsRules } from '../../../../infra/install/rbac-rules.js';
import { machinesAwaitingUserData } from '../../../../controller/reconcilers/host-reads/decide.js';

const machine = (name: string, extra: { userData?: string; capi?: boolean; provisioned?: boolean; deleting?: boolean } = {}): InfraMachine =>
  ({
    apiVersion: 'infrastructure.banlieue.io/v1alpha1',
    kind: 'CloudHypervisorMachine',
    metadata: {
      name,
      namespace: 'team-a',
      ...(extra.deleting ? { deletionTimestamp: '2026-12-02T00:00:00Z' } : {}),
      ...(extra.capi ? { ownerReferences: [{ apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Machine', name, uid: 'u', controller: true }] } : {}),
    },
    spec: extra.userData ? { userDataSecretRef: { name: extra.userData } } : {},
    ...(extra.provisioned ? { status: { initialization: { provisioned: true } } } : {}),
  }) as unknown as InfraMachine;

describe('host reads', () => {
  it('lists the user-data of machines still to be created; a CAPI-owned one without a ref is looked up on its Machine', () => {
    const readers = machinesAwaitingUserData([
      machine('new', { userData: 'new-user-data' }),
      machine('running', { userData: 'running-user-data', provisioned: true }),
      machine('going', { userData: 'going-user-data', deleting: true }),
      machine('worker', { capi: true }),
      machine('bare'),
    ]);
    expect(readers.named).toEqual(['new-user-data']);
    expect(readers.fromOwningMachine.map((m) => m.metadata.name)).toEqual(['worker']);
  });

  it('grants get on exactly those Secrets, sorted and once each; none is no rule', () => {
    expect(hostReadsRules(['b', 'a', 'b'])).toEqual([{ apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: ['a', 'b'] }]);
    expect(hostReadsRules([])).toEqual([]);
  });
});
