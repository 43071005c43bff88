import { describe, expect, it } from 'vitest';
import { awaitsCapiMachine, capiOwner, claimsBack, type CapiMachine, type Owned } from '../../../controller/reconcilers/owning-machine.js';

const infra: Owned = {
  apiVersion: 'infrastructure.banlieue.io/v1alpha1',
  kind: 'VSphereMachine',
  metadata: {
    name: 'cp-0-abcde',
    namespace: 'team-a',
    ownerReferences: [{ apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Machine', name: 'cp-0', uid: 'machine-uid', controller: true }],
  },
};
const owner = capiOwner(infra);

const machine = (change: { uid?: string; ref?: Record<string, string> } = {}): CapiMachine => ({
  metadata: { uid: change.uid ?? 'machine-uid' },
  spec: {
    bootstrap: { dataSecretName: 'cp-0-bootstrap' },
    infrastructureRef: change.ref ?? { apiGroup: 'infrastructure.banlieue.io', kind: 'VSphereMachine', name: 'cp-0-abcde' },
  },
});

describe('the owning CAPI Machine', () => {
  it('counts when it is the Machine the owner reference names and it names this machine back', () => {
    if (!owner) throw new Error('no owner');
    expect(claimsBack(machine(), owner, infra)).toBe(true);
  });

  it('counts a v1beta1 infrastructureRef (apiVersion) too', () => {
    if (!owner) throw new Error('no owner');
    expect(claimsBack(machine({ ref: { apiVersion: 'infrastructure.banlieue.io/v1alpha1', kind: 'VSphereMachine', name: 'cp-0-abcde' } }), owner, infra)).toBe(
      true,
    );
  });

  it.each([
    ['another Machine of that name (another uid)', machine({ uid: 'other-uid' })],
    [
      'a Machine whose infrastructure is another machine (a forged owner reference)',
      machine({ ref: { apiGroup: 'infrastructure.banlieue.io', kind: 'VSphereMachine', name: 'cp-0-real' } }),
    ],
    ['a Machine on another kind', machine({ ref: { apiGroup: 'infrastructure.banlieue.io', kind: 'ProxmoxMachine', name: 'cp-0-abcde' } })],
    ['a Machine on another provider’s group', machine({ ref: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'VSphereMachine', name: 'cp-0-abcde' } })],
    ['a Machine with no infrastructureRef', { metadata: { uid: 'machine-uid' }, spec: {} }],
  ])('does not count %s: its bootstrap Secret never reaches this machine', (_what, m) => {
    if (!owner) throw new Error('no owner');
    expect(claimsBack(m, owner, infra)).toBe(false);
  });

  it('is awaited by a machine CAPI made before its Machine owns it (owned by a MachineSet), not by one only labelled with a cluster', () => {
    const bySet = {
      ...infra,
      metadata: {
        ...infra.metadata,
        ownerReferences: [{ apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'MachineSet', name: 'md-0-x', uid: 'u', controller: true }],
      },
    };
    expect(awaitsCapiMachine(bySet)).toBe(true);
    expect(awaitsCapiMachine({ ...infra, metadata: { name: 'w', labels: { 'cluster.x-k8s.io/cluster-name': 'k8s' } } } as Owned)).toBe(false);
    // Its Machine owns it: no longer awaited. A VirtualMachine's machine, or one written by hand, never is.
    expect(awaitsCapiMachine(infra)).toBe(false);
    const byVm = {
      ...infra,
      metadata: { name: 'web-1', ownerReferences: [{ apiVersion: 'banlieue.io/v1alpha1', kind: 'VirtualMachine', name: 'web-1', uid: 'u', controller: true }] },
    };
    expect(awaitsCapiMachine(byVm)).toBe(false);
    expect(awaitsCapiMachine({ ...infra, metadata: { name: 'by-hand' } })).toBe(false);
  });
});
