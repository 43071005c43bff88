// The VirtualMachine decision on placement (issue 10, Build 7): where the VM
// runs is its infrastructure machine, not status.scheduled. A record another
// writer changed is restored from the machine with a Warning and moves
// nothing; a real drift is acted on as migrationPolicy allows, the Event
// planned with the deletion (the reconciler records it first).
import { describe, expect, it } from 'vitest';
import type { Provider } from '../../../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { ScheduledPlacement, VirtualMachine } from '../../../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import type { Condition } from '../../../../infra/api/common.js';
import { ConditionType, Reason } from '../../../../infra/api/conditions.js';
import { Annotation, Finalizer } from '../../../../infra/api/well-known.js';
import { BUILT_IN_BACKENDS } from '../../../../controller/backends/registry.js';
import { decideVirtualMachine, type PlannedEvent, type VmObserved, type VmPlan } from '../../../../controller/reconcilers/virtual-machine/decide.js';
import type { InfraMachineObject } from '../../../../controller/reconcilers/virtual-machine/infra-builders.js';
import type { InfraState } from '../../../../controller/reconcilers/virtual-machine/ownership.js';
import { vmImage } from '../../../support/backend-samples.js';
import { STORAGE_CLASSES, provider, readyRow, vmClass, vsphereDomain } from '../../scheduler/fixtures.js';
import { aVm } from './fixtures.js';

const NOW = new Date('2026-03-01T12:00:00Z');
const MADE = '2026-02-01T08:00:00Z';
const KINDS = ['VSphereMachine', 'ProxmoxMachine', 'LibvirtMachine', 'CloudHypervisorMachine'];
const HOME = 'vcenter-a/vcenter-a-dc1-c1';

const vcenterA = provider('vcenter-a');
const vcenterB = provider('vcenter-b');
/** vcenter-a without the failure domain the VM runs in. */
const vcenterAWithoutHome = provider('vcenter-a', { failureDomains: [vsphereDomain('vcenter-a', 'dc1', 'c2')] });
/** vcenter-a mapping storage class "fast" to another datastore. */
const vcenterARemapped: Provider = {
  ...vcenterA,
  spec: { ...vcenterA.spec, capabilities: { ...vcenterA.spec.capabilities, storageClasses: STORAGE_CLASSES.map((c) => (c.name === 'fast' ? { name: 'fast', target: { datastore: 'ds-new' } } : c)) } },
};

type Policy = NonNullable<VirtualMachine['spec']['migrationPolicy']>;

function aPolicyVm(migrationPolicy?: Policy, annotations?: Record<string, string>): VirtualMachine {
  return aVm(migrationPolicy ? { migrationPolicy } : {}, { finalizers: [Finalizer.virtualMachine], generation: 1, ...(annotations ? { annotations } : {}) });
}

function observed(vm: VirtualMachine, infra: InfraState[], providers: Provider[] = [vcenterA]): VmObserved {
  return {
    backends: BUILT_IN_BACKENDS,
    vm,
    vmClass: vmClass('small'),
    image: vmImage('ubuntu-24.04', { rows: providers.map(readyRow) }),
    providers,
    siblings: [],
    siblingAddresses: [],
    infra,
  };
}

const absent = (): InfraState[] => KINDS.map((kind) => ({ kind, state: 'Absent' }));
const running = (machine: InfraMachineObject): InfraState[] => KINDS.map((kind): InfraState => (kind === machine.kind ? { kind, state: 'Present', object: machine } : { kind, state: 'Absent' }));

/** `vm` after a first pass on vcenter-a: the machine the controller built (made, with a uid) and the status it recorded. */
function placed(vm: VirtualMachine): { vm: VirtualMachine; machine: InfraMachineObject; record: ScheduledPlacement } {
  const first = decideVirtualMachine(observed(vm, absent()), NOW);
  if (!first.applyInfra || !first.status?.scheduled) throw new Error('expected a first placement');
  const machine = { ...first.applyInfra, metadata: { ...first.applyInfra.metadata, uid: 'machine-uid', creationTimestamp: MADE } };
  return { vm: { ...vm, status: first.status }, machine, record: first.status.scheduled };
}

function withRecord(vm: VirtualMachine, scheduled: ScheduledPlacement | undefined): VirtualMachine {
  const { scheduled: _, ...rest } = vm.status ?? {};
  return { ...vm, status: { ...rest, ...(scheduled ? { scheduled } : {}) } };
}

const condition = (plan: VmPlan, type: string): Condition | undefined => plan.status?.conditions?.find((c) => c.type === type);
const restored = (message: string): PlannedEvent => ({ type: 'Warning', reason: Reason.ScheduledRestored, message: expect.stringContaining(message) as unknown as string });

describe('VirtualMachine placement record', () => {
  it('writes the placement it chose, and nothing more while the record and the machine agree', () => {
    const { vm, machine, record } = placed(aPolicyVm());
    expect(record).toMatchObject({ providerName: 'vcenter-a', providerClass: 'vsphere', failureDomain: 'vcenter-a-dc1-c1', resolvedStorage: [{ className: 'fast', backendId: 'ds-ssd' }] });
    const plan = decideVirtualMachine(observed(vm, running(machine)), NOW);
    expect(plan.events).toEqual([]);
    expect(plan.deleteInfra).toEqual([]);
    expect(plan.status?.scheduled).toBe(record);
  });

  it.each<[string, (r: ScheduledPlacement) => ScheduledPlacement | undefined, string]>([
    ['another Provider', (r) => ({ ...r, providerName: 'vcenter-b', failureDomain: 'vcenter-b-dc1-c1' }), 'status.scheduled (vcenter-b/vcenter-b-dc1-c1)'],
    ['another failure domain', (r) => ({ ...r, failureDomain: 'vcenter-a-dc2-c1' }), 'status.scheduled (vcenter-a/vcenter-a-dc2-c1)'],
    ['another backend', (r) => ({ ...r, providerClass: 'proxmox' }), `status.scheduled (${HOME})`],
    ['another storage target', (r) => ({ ...r, resolvedStorage: [{ className: 'fast', backendId: 'ds-hdd' }] }), `status.scheduled (${HOME} with other class targets)`],
    ['another network target', (r) => ({ ...r, resolvedNetworks: [{ className: 'prod', backendId: 'pg-elsewhere' }] }), `status.scheduled (${HOME} with other class targets)`],
    ['nothing (removed)', () => undefined, 'status.scheduled (unset)'],
  ])('restores a record naming %s from the machine, with a Warning, and moves nothing', (_, forge, said) => {
    for (const policy of ['automatic', 'manual', 'never'] as const) {
      const { vm, machine, record } = placed(aPolicyVm(policy));
      const plan = decideVirtualMachine(observed(withRecord(vm, forge(record)), running(machine)), NOW);
      expect(plan.deleteInfra).toEqual([]);
      expect(plan.applyInfra?.metadata.uid).toBe('machine-uid');
      expect(plan.status?.scheduled).toEqual({ ...record, scheduledAt: MADE });
      expect(plan.events).toEqual([restored(`${said} does not match VSphereMachine web-1, which runs the VirtualMachine on ${HOME}: restored from the machine; the VirtualMachine is not moved`)]);
      expect(condition(plan, ConditionType.PlacementValid)).toMatchObject({ status: 'True', reason: Reason.PlacementMatches });
    }
  });

  it('restores what the machine says while nothing can be placed (its class is gone), keeping the machine', () => {
    const { vm, machine, record } = placed(aPolicyVm());
    const plan = decideVirtualMachine({ ...observed(withRecord(vm, { ...record, providerName: 'vcenter-b' }), running(machine)), vmClass: undefined }, NOW);
    expect(condition(plan, ConditionType.Scheduled)).toMatchObject({ status: 'False', reason: Reason.ClassNotFound });
    expect(plan.deleteInfra).toEqual([]);
    // Without the class no targets are read back, and a record of another Provider's are not kept.
    expect(plan.status?.scheduled).toEqual({ providerName: 'vcenter-a', providerClass: 'vsphere', failureDomain: 'vcenter-a-dc1-c1', scheduledAt: MADE });
    expect(plan.events).toEqual([restored('status.scheduled (vcenter-b/vcenter-a-dc1-c1)')]);
  });

  it('places anew, without a Warning, a VM whose record names a placement but that runs nowhere', () => {
    const { vm, record } = placed(aPolicyVm('never'));
    const plan = decideVirtualMachine(observed(withRecord(vm, { ...record, failureDomain: 'vcenter-a-dc2-c1' }), absent()), NOW);
    expect(plan.events).toEqual([]);
    expect(plan.applyInfra?.spec).toMatchObject({ failureDomain: 'vcenter-a-dc1-c1' });
    expect(plan.status?.scheduled).toMatchObject({ failureDomain: 'vcenter-a-dc1-c1' });
  });
});

describe('VirtualMachine placement drift', () => {
  it.each<[string, Provider[], Reason, string]>([
    ['its failure domain is gone', [vcenterAWithoutHome], Reason.FailureDomainChanged, `the failure domain no longer fits: ${HOME} → vcenter-a/vcenter-a-dc1-c2`],
    ['its Provider is gone', [vcenterB], Reason.ProviderChanged, `the Provider no longer fits: ${HOME} → vcenter-b/vcenter-b-dc1-c1`],
    ['its storage class now maps to another datastore', [vcenterARemapped], Reason.StorageMappingChanged, `a storage class now resolves differently on ${HOME}: class "fast": ds-ssd → ds-new`],
  ])('announces, then deletes the machine of an automatic VM when %s', (_, providers, reason, what) => {
    const { vm, machine, record } = placed(aPolicyVm());
    const plan = decideVirtualMachine(observed(vm, running(machine), providers), NOW);
    expect(plan.deleteInfra).toEqual([machine]);
    expect(plan.applyInfra).toBeUndefined();
    expect(plan.events).toEqual([{ type: 'Warning', reason, message: expect.stringContaining(`${what}: deleting VSphereMachine web-1 to recreate the VirtualMachine on`) }]);
    expect(plan.events[0]?.message).toMatch(/\(migrationPolicy automatic\)$/);
    expect(condition(plan, ConditionType.PlacementValid)).toMatchObject({ status: 'False', reason });
    // The record stays where the VM runs until the next pass places it.
    expect(plan.status?.scheduled).toBe(record);
  });

  it('warns once, and keeps the machine, when a manual VM drifts', () => {
    const { vm, machine } = placed(aPolicyVm('manual'));
    const plan = decideVirtualMachine(observed(vm, running(machine), [vcenterAWithoutHome]), NOW);
    expect(plan.deleteInfra).toEqual([]);
    expect(plan.applyInfra).toBeUndefined();
    expect(plan.events).toEqual([{ type: 'Warning', reason: Reason.FailureDomainChanged, message: expect.stringContaining(`migrationPolicy manual keeps the VirtualMachine on ${HOME}; annotate ${Annotation.migrate}=true to recreate it`) }]);
    const again = decideVirtualMachine(observed({ ...vm, status: plan.status }, running(machine), [vcenterAWithoutHome]), NOW);
    expect(again.events).toEqual([]);
    expect(condition(again, ConditionType.PlacementValid)).toMatchObject({ status: 'False', reason: Reason.FailureDomainChanged });
  });

  it('announces, then deletes the machine of a manual VM annotated to migrate', () => {
    const { vm, machine } = placed(aPolicyVm('manual', { [Annotation.migrate]: 'true' }));
    const plan = decideVirtualMachine(observed(vm, running(machine), [vcenterAWithoutHome]), NOW);
    expect(plan.deleteInfra).toEqual([machine]);
    expect(plan.events[0]?.message).toMatch(/\(migrationPolicy manual, banlieue\.io\/migrate=true\)$/);
  });

  it('leaves a never VM where it runs, silently', () => {
    const { vm, machine, record } = placed(aPolicyVm('never'));
    const plan = decideVirtualMachine(observed(vm, running(machine), [vcenterAWithoutHome]), NOW);
    expect(plan.deleteInfra).toEqual([]);
    expect(plan.applyInfra).toBeUndefined();
    expect(plan.events).toEqual([]);
    expect(plan.status?.scheduled).toBe(record);
  });

  it('judges a real drift by the machine even when the record was forged to match the fresh placement', () => {
    const { vm, machine, record } = placed(aPolicyVm());
    const forged = { ...record, failureDomain: 'vcenter-a-dc1-c2' };
    const plan = decideVirtualMachine(observed(withRecord(vm, forged), running(machine), [vcenterAWithoutHome]), NOW);
    expect(plan.deleteInfra).toEqual([machine]);
    expect(plan.events.map((e) => e.reason)).toEqual([Reason.ScheduledRestored, Reason.FailureDomainChanged]);
    expect(plan.status?.scheduled).toMatchObject({ failureDomain: 'vcenter-a-dc1-c1' });
  });

  it('announces the deletion of a second machine of another kind the VM controls', () => {
    const { vm, machine } = placed(aPolicyVm());
    const second = { ...machine, kind: 'ProxmoxMachine', metadata: { ...machine.metadata, uid: 'second-uid' } } as InfraMachineObject;
    const infra = KINDS.map((kind): InfraState => (kind === 'VSphereMachine' ? { kind, state: 'Present', object: machine } : kind === 'ProxmoxMachine' ? { kind, state: 'Present', object: second } : { kind, state: 'Absent' }));
    const plan = decideVirtualMachine(observed(vm, infra), NOW);
    expect(plan.deleteInfra).toEqual([second]);
    expect(plan.events).toEqual([{ type: 'Warning', reason: Reason.ProviderChanged, message: `deleting ProxmoxMachine web-1: the VirtualMachine runs as VSphereMachine web-1 on ${HOME}` }]);
  });
});
