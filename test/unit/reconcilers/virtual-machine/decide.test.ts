// The VirtualMachine decision on objects in its way (no Secret takeover): a
// Secret `<vm>-user-data` or an infrastructure machine of the VM's name that is
// not the VM's is reported, never written, referred to or deleted; the VM's own
// ones are created once and then updated by uid.
import { describe, expect, it } from 'vitest';
import type { Condition } from '../../../../infra/api/meta.js';
import { ConditionType, Reason } from '../../../../infra/api/conditions.js';
import type { OwnerReference } from '../../../../infra/api/kind.js';
import { Finalizer, SecretType } from '../../../../infra/api/well-known.js';
import { BUILT_IN_BACKENDS } from '../../../../controller/backends/registry.js';
import { decideVirtualMachine, decideWriteConflict, type VmObserved, type VmPlan } from '../../../../controller/reconcilers/virtual-machine/decide.js';
import type { InfraMachine } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/infra-machine.js';
import { renderedSecretConflict, toUserDataSecret, type InfraState, type LiveSecret } from '../../../../controller/reconcilers/virtual-machine/ownership.js';
import { vmImage } from '../../../support/backend-samples.js';
import { provider, readyRow, vmClass } from '../../scheduler/fixtures.js';
import { aVm, VM_UID } from './fixtures.js';
import { withOverrides, type Overrides } from '../../../support/overrides.js';

const NOW = new Date('2026-03-01T12:00:00Z');
// No placeholder: what rendering does is user-data.test.ts's subject.
const USER_DATA = '#!/bin/sh\necho ready\n';
const RENDERED = Buffer.from(USER_DATA).toString('base64');
const KINDS = ['VSphereMachine', 'ProxmoxMachine', 'LibvirtMachine', 'CloudHypervisorMachine'];

const vcenter = provider('vcenter-a');
const vm = aVm({ userData: { secretRef: { name: 'cloud-init' } } }, { finalizers: [Finalizer.virtualMachine], generation: 1 });
const ours: OwnerReference = {
  apiVersion: 'banlieue.io/v1alpha1',
  kind: 'VirtualMachine',
  name: 'web-1',
  uid: VM_UID,
  controller: true,
  blockOwnerDeletion: true,
};

/** The VM placeable on vcenter-a, its user-data source readable; `change` replaces parts. */
function observed(change: Partial<VmObserved> = {}): VmObserved {
  return {
    backends: BUILT_IN_BACKENDS,
    vm,
    vmClass: vmClass('small'),
    image: vmImage('ubuntu-24.04', { rows: [readyRow(vcenter)] }),
    providers: [vcenter],
    siblings: () => [],
    siblingAddresses: [],
    infra: KINDS.map((kind) => ({ kind, state: 'Absent' })),
    userData: { ok: true, content: USER_DATA },
    renderedSecret: { state: 'Absent' },
    ...change,
  };
}

function secret(change: Overrides<LiveSecret> = {}): LiveSecret {
  return withOverrides(
    { metadata: { name: 'web-1-user-data', uid: 'secret-uid', ownerReferences: [ours] }, type: SecretType.userData, value: RENDERED },
    change,
  );
}

function machine(kind: string, ownerReferences: OwnerReference[], extra: Partial<InfraMachine['metadata']> = {}): InfraMachine {
  return {
    apiVersion: 'infrastructure.banlieue.io/v1alpha1',
    kind,
    metadata: { name: 'web-1', namespace: 'team-a', uid: 'machine-uid', ownerReferences, ...extra },
    spec: { providerRef: { name: 'vcenter-a' }, failureDomain: 'vcenter-a-dc1-c1' },
  } as InfraMachine;
}

/** Infra states with `state` for the VSphereMachine, the other kinds absent. */
function withVsphere(state: InfraState): InfraState[] {
  return KINDS.map((kind): InfraState => (kind === 'VSphereMachine' ? state : { kind, state: 'Absent' }));
}

const condition = (plan: Pick<VmPlan, 'status'>, type: string): Condition | undefined => plan.status?.conditions?.find((c) => c.type === type);

const capiMachine: OwnerReference = { apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Machine', name: 'workers-abc', uid: 'capi-uid', controller: true };

describe('VirtualMachine rendered user-data Secret', () => {
  it('creates the Secret with banlieue type and the VM as controller, and refers the infra machine to it', () => {
    const plan = decideVirtualMachine(observed(), NOW);
    expect(plan.userDataSecret).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'web-1-user-data', namespace: 'team-a', labels: { 'banlieue.io/owned-by': 'web-1' }, ownerReferences: [ours] },
      type: 'banlieue.io/user-data',
      data: { value: RENDERED },
    });
    expect(plan.applyInfra?.spec).toMatchObject({ userDataSecretRef: { name: 'web-1-user-data', key: 'value' } });
    expect(plan.applyInfra?.metadata.uid).toBeUndefined();
  });

  it('writes nothing to its own Secret when it already holds the rendered user-data', () => {
    const plan = decideVirtualMachine(observed({ renderedSecret: { state: 'Present', secret: secret() } }), NOW);
    expect(plan.userDataSecret).toBeUndefined();
    expect(plan.applyInfra?.spec).toMatchObject({ userDataSecretRef: { name: 'web-1-user-data' } });
  });

  it('updates its own Secret, by uid, when the rendered user-data changed', () => {
    const plan = decideVirtualMachine(observed({ renderedSecret: { state: 'Present', secret: secret({ value: 'b2xk' }) } }), NOW);
    expect(plan.userDataSecret?.metadata.uid).toBe('secret-uid');
    expect(plan.userDataSecret?.data.value).toBe(RENDERED);
  });

  it.each<[string, LiveSecret, string]>([
    [
      'a TLS Secret',
      secret({ type: 'kubernetes.io/tls', metadata: { name: 'web-1-user-data', uid: 'x' } }),
      'its type is kubernetes.io/tls, not banlieue.io/user-data',
    ],
    ['an Opaque Secret the VM controls (an earlier banlieue)', secret({ type: 'Opaque' }), 'its type is Opaque, not banlieue.io/user-data'],
    ['a Secret of unset type', secret({ type: undefined }), 'its type is Opaque'],
    ['a banlieue Secret with no controller', secret({ metadata: { name: 'web-1-user-data', uid: 'x' } }), 'it has no controller'],
    [
      'a banlieue Secret the VM only owns, not controls',
      secret({ metadata: { uid: 'x', ownerReferences: [{ ...ours, controller: false }] } }),
      'it has no controller',
    ],
    [
      'a banlieue Secret of an earlier VM of the same name',
      secret({ metadata: { uid: 'x', ownerReferences: [{ ...ours, uid: 'old-vm-uid' }] } }),
      'it is controlled by VirtualMachine web-1 of uid old-vm-uid, not this one',
    ],
    [
      'a banlieue Secret another object controls',
      secret({ metadata: { uid: 'x', ownerReferences: [capiMachine] } }),
      'it is controlled by Machine workers-abc',
    ],
  ])('marks Scheduled False with UserDataSecretConflict and writes nothing for %s', (_, live, why) => {
    const plan = decideVirtualMachine(observed({ renderedSecret: { state: 'Present', secret: live } }), NOW);
    expect(plan.userDataSecret).toBeUndefined();
    expect(plan.applyInfra).toBeUndefined();
    expect(plan.requeueAfterMs).toBeGreaterThan(0);
    const scheduled = condition(plan, ConditionType.Scheduled);
    expect(scheduled).toMatchObject({ status: 'False', reason: Reason.UserDataSecretConflict });
    expect(scheduled?.message).toContain('Secret web-1-user-data exists and is not this VirtualMachine');
    expect(scheduled?.message).toContain(why);
    expect(condition(plan, ConditionType.Ready)).toMatchObject({ status: 'False' });
  });

  it('never puts the Secret content in a condition', () => {
    const live = secret({ type: 'kubernetes.io/tls', value: 'LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0t' });
    const plan = decideVirtualMachine(observed({ renderedSecret: { state: 'Present', secret: live } }), NOW);
    expect(JSON.stringify(plan.status)).not.toContain(live.value);
    expect(JSON.stringify(plan.status)).not.toContain('echo ready');
  });

  it('keeps the running infra machine while its Secret is in conflict, and does not rewrite it', () => {
    const running = machine('VSphereMachine', [ours]);
    const plan = decideVirtualMachine(
      observed({
        infra: withVsphere({ kind: 'VSphereMachine', state: 'Present', object: running }),
        renderedSecret: { state: 'Present', secret: secret({ type: 'Opaque' }) },
      }),
      NOW,
    );
    expect(plan.deleteInfra).toEqual([]);
    expect(plan.applyInfra).toBeUndefined();
    expect(condition(plan, ConditionType.Scheduled)).toMatchObject({ status: 'False', reason: Reason.UserDataSecretConflict });
  });

  it.each<[string, LiveSecret, boolean]>([
    ['its own', secret(), false],
    ['a foreign type', secret({ type: 'kubernetes.io/tls' }), true],
    ['a missing controller', secret({ metadata: { ownerReferences: [] } }), true],
  ])('judges a Secret with %s as %s', (_, live, conflict) => {
    expect(renderedSecretConflict(live, vm) !== undefined).toBe(conflict);
  });

  it('builds its Secret so that a later pass judges it its own', () => {
    const built = toUserDataSecret(vm, 'x');
    expect(renderedSecretConflict({ metadata: built.metadata, type: built.type, value: built.data.value }, vm)).toBeUndefined();
  });
});

describe('VirtualMachine infrastructure machine ownership', () => {
  it.each<[string, OwnerReference[], string]>([
    ['a CAPI Machine', [capiMachine], 'it is controlled by Machine workers-abc'],
    ['nobody', [], 'it has no controller'],
    ['an earlier VM of the same name', [{ ...ours, uid: 'old-vm-uid' }], 'of uid old-vm-uid, not this one'],
  ])('marks Scheduled False with InfraMachineConflict when a machine of its name is controlled by %s', (_, owners, why) => {
    const foreign = machine('VSphereMachine', owners);
    const plan = decideVirtualMachine(observed({ infra: withVsphere({ kind: 'VSphereMachine', state: 'Present', object: foreign }) }), NOW);
    expect(plan.applyInfra).toBeUndefined();
    expect(plan.userDataSecret).toBeUndefined();
    expect(plan.deleteInfra).toEqual([]);
    const scheduled = condition(plan, ConditionType.Scheduled);
    expect(scheduled).toMatchObject({ status: 'False', reason: Reason.InfraMachineConflict });
    expect(scheduled?.message).toContain('VSphereMachine web-1 exists and is not controlled by this VirtualMachine');
    expect(scheduled?.message).toContain(why);
    // Its status is not the VM's to mirror.
    expect(plan.status?.infrastructureRef).toBeUndefined();
  });

  it('updates its own machine by uid', () => {
    const own = machine('VSphereMachine', [ours]);
    const plan = decideVirtualMachine(observed({ infra: withVsphere({ kind: 'VSphereMachine', state: 'Present', object: own }) }), NOW);
    expect(plan.applyInfra?.metadata.uid).toBe('machine-uid');
    expect(condition(plan, ConditionType.Scheduled)).toMatchObject({ status: 'True' });
  });

  it('neither deletes nor waits for a machine of another kind it does not control', () => {
    const foreign = machine('ProxmoxMachine', [capiMachine]);
    const infra = KINDS.map((kind): InfraState => (kind === 'ProxmoxMachine' ? { kind, state: 'Present', object: foreign } : { kind, state: 'Absent' }));
    const plan = decideVirtualMachine(observed({ infra }), NOW);
    expect(plan.deleteInfra).toEqual([]);
    expect(plan.applyInfra?.kind).toBe('VSphereMachine');
  });

  it('deletes only the machines it controls when the VM is deleted, and is released when they are gone', () => {
    const deleting = { ...vm, metadata: { ...vm.metadata, deletionTimestamp: '2026-03-01T11:00:00Z' } };
    const own = machine('VSphereMachine', [ours]);
    const foreign = machine('ProxmoxMachine', [capiMachine]);
    const infra = KINDS.map((kind): InfraState => {
      if (kind === 'VSphereMachine') return { kind, state: 'Present', object: own };
      if (kind === 'ProxmoxMachine') return { kind, state: 'Present', object: foreign };
      return { kind, state: 'Absent' };
    });
    const plan = decideVirtualMachine(observed({ vm: deleting, infra }), NOW);
    expect(plan.deleteInfra).toEqual([own]);
    expect(plan.removeFinalizer).toBe(false);
    const gone = decideVirtualMachine(
      observed({ vm: deleting, infra: infra.map((i) => (i.kind === 'VSphereMachine' ? { kind: i.kind, state: 'Absent' } : i)) }),
      NOW,
    );
    expect(gone.deleteInfra).toEqual([]);
    expect(gone.removeFinalizer).toBe(true);
  });
});

describe('VirtualMachine deletionPolicy', () => {
  const deleting = (deletionPolicy?: 'Delete' | 'Retain') => ({
    ...vm,
    spec: { ...vm.spec, ...(deletionPolicy ? { deletionPolicy } : {}) },
    metadata: { ...vm.metadata, deletionTimestamp: '2026-03-01T11:00:00Z' },
  });
  const own = (deletionPolicy?: 'Delete' | 'Retain'): InfraMachine => {
    const m = machine('VSphereMachine', [ours]);
    return { ...m, spec: { ...m.spec, ...(deletionPolicy ? { deletionPolicy } : {}) } } as InfraMachine;
  };

  it('gives a machine that does not say Retain the policy first, and deletes it on a later pass', () => {
    const first = decideVirtualMachine(
      observed({ vm: deleting('Retain'), infra: withVsphere({ kind: 'VSphereMachine', state: 'Present', object: own() }) }),
      NOW,
    );
    expect(first.deleteInfra).toEqual([]);
    expect(first.setDeletionPolicy).toEqual([{ machine: own(), deletionPolicy: 'Retain' }]);
    const then = decideVirtualMachine(
      observed({ vm: deleting('Retain'), infra: withVsphere({ kind: 'VSphereMachine', state: 'Present', object: own('Retain') }) }),
      NOW,
    );
    expect(then.deleteInfra).toEqual([own('Retain')]);
    expect(then.events).toEqual([
      {
        type: 'Normal',
        reason: Reason.VMRetained,
        message: expect.stringContaining('deletionPolicy Retain: VSphereMachine web-1 is deleted and its VM is left on the backend') as unknown as string,
      },
    ]);
  });

  it('says VMRetained once, when it deletes the machine, and neither deletes it nor says so again on each pass that waits for the provider to let it go', () => {
    const terminating = { ...own('Retain'), metadata: { ...own('Retain').metadata, deletionTimestamp: '2026-03-01T11:00:01Z' } } as InfraMachine;
    const waitingPass = decideVirtualMachine(
      observed({ vm: deleting('Retain'), infra: withVsphere({ kind: 'VSphereMachine', state: 'Present', object: terminating }) }),
      NOW,
    );
    expect(waitingPass.events).toEqual([]);
    expect(waitingPass.deleteInfra).toEqual([]);
    expect(waitingPass.removeFinalizer).toBe(false);
    expect(waitingPass.requeueAfterMs).toBeDefined();
  });

  it('deletes nothing while the garbage collector orphans the machines (propagationPolicy Orphan)', () => {
    const orphaning = { ...deleting(), metadata: { ...deleting().metadata, finalizers: ['orphan', Finalizer.virtualMachine] } };
    const plan = decideVirtualMachine(observed({ vm: orphaning, infra: withVsphere({ kind: 'VSphereMachine', state: 'Present', object: own() }) }), NOW);
    expect(plan.deleteInfra).toEqual([]);
    expect(plan.removeFinalizer).toBe(false);
    // Orphaned, the machine is no longer the VM's: the VM lets go, nothing deleted.
    const orphaned = machine('VSphereMachine', []);
    const after = decideVirtualMachine(observed({ vm: deleting(), infra: withVsphere({ kind: 'VSphereMachine', state: 'Present', object: orphaned }) }), NOW);
    expect(after.deleteInfra).toEqual([]);
    expect(after.removeFinalizer).toBe(true);
  });

  it.each([undefined, 'Delete'] as const)('deletes at once, saying nothing, a machine whose policy matches the VM (%s)', (policy) => {
    const plan = decideVirtualMachine(
      observed({ vm: deleting(policy), infra: withVsphere({ kind: 'VSphereMachine', state: 'Present', object: own(policy) }) }),
      NOW,
    );
    expect(plan.setDeletionPolicy).toBeUndefined();
    expect(plan.deleteInfra).toEqual([own(policy)]);
    expect(plan.events).toEqual([]);
  });
});

describe('VirtualMachine status after a refused write', () => {
  it.each([Reason.UserDataSecretConflict, Reason.InfraMachineConflict] as const)('reports %s on Scheduled and rechecks later', (reason) => {
    const result = decideWriteConflict(observed(), { reason, message: 'VSphereMachine web-1 is not updated: another writer changed a field' }, NOW);
    expect(condition(result, ConditionType.Scheduled)).toMatchObject({
      status: 'False',
      reason,
      message: 'VSphereMachine web-1 is not updated: another writer changed a field',
    });
    expect(condition(result, ConditionType.Ready)).toMatchObject({ status: 'False' });
    expect(result.requeueAfterMs).toBeGreaterThan(0);
  });
});
