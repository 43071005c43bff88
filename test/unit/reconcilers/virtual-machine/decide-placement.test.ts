// The VirtualMachine decision on placement: where the VM runs is its
// infrastructure machine, not status.scheduled. A record another writer
// changed is restored from the machine with a Warning and moves nothing; a
// running VM stays while its placement is possible, whatever else changes;
// an impossible one is acted on as migrationPolicy allows, announced first.
import { describe, expect, it } from 'vitest';
import type { Provider } from '../../../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { VMImage } from '../../../../infra/api/banlieue.io/v1alpha1/vm-image.js';
import type { ScheduledPlacement, VirtualMachine } from '../../../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import type { Condition } from '../../../../infra/api/meta.js';
import { ConditionType, Reason } from '../../../../infra/api/conditions.js';
import { Annotation, Finalizer } from '../../../../infra/api/well-known.js';
import { BUILT_IN_BACKENDS } from '../../../../controller/backends/registry.js';
import { decideVirtualMachine, type VmObserved, type VmPlan } from '../../../../controller/reconcilers/virtual-machine/decide.js';
import { withMachineMade, type PlannedEvent } from '../../../../controller/reconcilers/virtual-machine/vm-status.js';
import { containsAll } from '../../../../controller/runtime/status-writer.js';
import type { InfraMachine } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/infra-machine.js';
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
  spec: {
    ...vcenterA.spec,
    capabilities: {
      ...vcenterA.spec.capabilities,
      storageClasses: STORAGE_CLASSES.map((c) => (c.name === 'fast' ? { name: 'fast', target: { datastore: 'ds-new' } } : c)),
    },
  },
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
    siblings: () => [],
    siblingAddresses: [],
    infra,
  };
}

const absent = (): InfraState[] => KINDS.map((kind) => ({ kind, state: 'Absent' }));
const running = (machine: InfraMachine): InfraState[] =>
  KINDS.map((kind): InfraState => (kind === machine.kind ? { kind, state: 'Present', object: machine } : { kind, state: 'Absent' }));

/** `vm` after a first pass on vcenter-a: the machine the controller built (made, with a uid) and the status it recorded. */
function placed(vm: VirtualMachine, providers: Provider[] = [vcenterA]): { vm: VirtualMachine; machine: InfraMachine; record: ScheduledPlacement } {
  const first = decideVirtualMachine(observed(vm, absent(), providers), NOW);
  if (!first.applyInfra || !first.status?.scheduled) throw new Error('expected a first placement');
  const machine = { ...first.applyInfra, metadata: { ...first.applyInfra.metadata, uid: 'machine-uid', creationTimestamp: MADE } };
  return { vm: { ...vm, status: first.status }, machine, record: first.status.scheduled };
}

/** `vm` as the next pass reads it: with the status `plan` writes (a plan without one leaves status alone). */
function afterWrite(vm: VirtualMachine, plan: VmPlan): VirtualMachine {
  return plan.status ? { ...vm, status: plan.status } : vm;
}

function withRecord(vm: VirtualMachine, scheduled: ScheduledPlacement | undefined): VirtualMachine {
  const { scheduled: _, ...rest } = vm.status ?? {};
  return { ...vm, status: { ...rest, ...(scheduled ? { scheduled } : {}) } };
}

const condition = (plan: VmPlan, type: string): Condition | undefined => plan.status?.conditions?.find((c) => c.type === type);
const restored = (message: string): PlannedEvent => ({
  type: 'Warning',
  reason: Reason.ScheduledRestored,
  message: expect.stringContaining(message) as unknown as string,
});

describe('VirtualMachine placement record', () => {
  it('writes the placement it chose, and nothing more while the record and the machine agree', () => {
    const { vm, machine, record } = placed(aPolicyVm());
    expect(record).toMatchObject({
      providerName: 'vcenter-a',
      providerClass: 'vsphere',
      failureDomain: 'vcenter-a-dc1-c1',
      resolvedStorage: [{ className: 'fast', backendId: 'ds-ssd' }],
    });
    const plan = decideVirtualMachine(observed(vm, running(machine)), NOW);
    expect(plan.events).toEqual([]);
    expect(plan.deleteInfra).toEqual([]);
    expect(plan.status?.scheduled).toBe(record);
  });

  it('says, once its pass made the machine, what the pass that sees it decides: that pass writes nothing', () => {
    const vm = aPolicyVm();
    const first = decideVirtualMachine(observed(vm, absent()), NOW);
    if (!first.applyInfra || !first.status) throw new Error('expected a first placement');
    expect(condition(first, ConditionType.InfrastructureReady)?.message).toBe('VSphereMachine web-1 does not exist yet');
    const made: InfraMachine = { ...first.applyInfra, metadata: { ...first.applyInfra.metadata, uid: 'machine-uid', creationTimestamp: MADE } };
    const written = withMachineMade(first.status, made, NOW);
    expect(written.conditions?.find((c) => c.type === ConditionType.InfrastructureReady)).toMatchObject({
      status: 'False',
      reason: Reason.Pending,
      message: 'VSphereMachine web-1 has no Ready condition yet',
    });
    expect(written.conditions?.find((c) => c.type === ConditionType.Ready)).toMatchObject({
      status: 'False',
      reason: Reason.InfrastructureNotReady,
      message: 'Infrastructure not ready: VSphereMachine web-1 has no Ready condition yet',
    });
    expect({ ...written, conditions: undefined }).toEqual({ ...first.status, conditions: undefined });
    const next = decideVirtualMachine(observed({ ...vm, status: written }, running(made)), new Date(NOW.getTime() + 5_000));
    expect(containsAll(written, next.status)).toBe(true);
  });

  it('mirrors a machine its pass found made already, as that machine says', () => {
    const first = decideVirtualMachine(observed(aPolicyVm(), absent()), NOW);
    if (!first.applyInfra || !first.status) throw new Error('expected a first placement');
    const ready: Condition = { type: ConditionType.Ready, status: 'True', reason: 'Reconciled', message: '', lastTransitionTime: MADE };
    const found: InfraMachine = {
      ...first.applyInfra,
      status: { initialization: { provisioned: true }, addresses: [{ type: 'InternalIP', address: '192.0.2.10' }], conditions: [ready] },
    };
    const written = withMachineMade(first.status, found, NOW);
    expect(written.addresses).toEqual([{ type: 'InternalIP', address: '192.0.2.10' }]);
    expect(written.initialization).toEqual({ provisioned: true });
    expect(written.conditions?.find((c) => c.type === ConditionType.Ready)).toMatchObject({ status: 'True', reason: Reason.Reconciled });
  });

  it.each<[string, (r: ScheduledPlacement) => ScheduledPlacement | undefined, string]>([
    ['another Provider', (r) => ({ ...r, providerName: 'vcenter-b', failureDomain: 'vcenter-b-dc1-c1' }), 'status.scheduled (vcenter-b/vcenter-b-dc1-c1)'],
    ['another failure domain', (r) => ({ ...r, failureDomain: 'vcenter-a-dc2-c1' }), 'status.scheduled (vcenter-a/vcenter-a-dc2-c1)'],
    ['another backend', (r) => ({ ...r, providerClass: 'proxmox' }), `status.scheduled (${HOME})`],
    [
      'another storage target',
      (r) => ({ ...r, resolvedStorage: [{ className: 'fast', backendId: 'ds-hdd' }] }),
      `status.scheduled (${HOME} with other class targets)`,
    ],
    [
      'another network target',
      (r) => ({ ...r, resolvedNetworks: [{ className: 'prod', backendId: 'pg-elsewhere' }] }),
      `status.scheduled (${HOME} with other class targets)`,
    ],
    ['nothing (removed)', () => undefined, 'status.scheduled (unset)'],
  ])('restores a record naming %s from the machine, with a Warning, and moves nothing', (_, forge, said) => {
    for (const policy of ['automatic', 'manual', 'never'] as const) {
      const { vm, machine, record } = placed(aPolicyVm(policy));
      const plan = decideVirtualMachine(observed(withRecord(vm, forge(record)), running(machine)), NOW);
      expect(plan.deleteInfra).toEqual([]);
      expect(plan.applyInfra?.metadata.uid).toBe('machine-uid');
      expect(plan.status?.scheduled).toEqual({ ...record, scheduledAt: MADE });
      expect(plan.events).toEqual([
        restored(
          `${said} does not match VSphereMachine web-1, which runs the VirtualMachine on ${HOME}: restored from the machine; the VirtualMachine is not moved`,
        ),
      ]);
      expect(condition(plan, ConditionType.PlacementValid)).toMatchObject({ status: 'True', reason: Reason.PlacementMatches });
    }
  });

  it('restores what the machine says while nothing can be placed (its class is gone), keeping the machine', () => {
    const { vm, machine, record } = placed(aPolicyVm());
    const { vmClass: _gone, ...classGone } = observed(withRecord(vm, { ...record, providerName: 'vcenter-b' }), running(machine));
    const plan = decideVirtualMachine(classGone, NOW);
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

/** A machine whose status records where its VM was created, and reports Ready=`ready`. */
function recorded(machine: InfraMachine, ready?: { reason: string; message: string }): InfraMachine {
  const location = { datacenter: 'dc1', cluster: 'c1', resourcePool: '/dc1/host/c1/Resources' };
  const conditions = ready ? [{ type: 'Ready', status: 'False' as const, reason: ready.reason, message: ready.message, lastTransitionTime: MADE }] : [];
  return { ...machine, status: { placement: { provider: 'vcenter-a', failureDomain: 'vcenter-a-dc1-c1', location }, conditions } } as InfraMachine;
}

/** vcenter-a publishing no failure domain, Ready=False CapacityExceeded, as a host over its threshold does. */
const vcenterAOverCapacity: Provider = {
  ...provider('vcenter-a', { failureDomains: [] }),
  status: { conditions: [{ type: 'Ready', status: 'False', reason: Reason.CapacityExceeded, message: 'memory 95% > 90%', lastTransitionTime: MADE }] },
};

describe('a running VirtualMachine stays where it runs', () => {
  const labelled = (p: Provider, labels: Record<string, string>): Provider => ({ ...p, metadata: { ...p.metadata, labels } });
  const imageNotReady = (): VMImage =>
    vmImage('ubuntu-24.04', { rows: [{ ...readyRow(vcenterA), ready: false, reason: Reason.ImageSourceNotFound, message: 'no template' }] });

  const selecting = (o: VmObserved): VmObserved => ({
    ...o,
    vm: { ...o.vm, spec: { ...o.vm.spec, placement: { providerSelector: { matchLabels: { env: 'prod' } } } } },
  });
  it.each<[string, (o: VmObserved) => VmObserved, Provider[]?]>([
    [
      'a Provider that sorts first appears',
      (o) => ({
        ...o,
        providers: [provider('vcenter-0'), vcenterA],
        image: vmImage('ubuntu-24.04', { rows: [readyRow(provider('vcenter-0')), readyRow(vcenterA)] }),
      }),
    ],
    [
      'a failure domain that sorts first appears',
      (o) => ({
        ...o,
        providers: [provider('vcenter-a', { failureDomains: [vsphereDomain('vcenter-a', 'dc0', 'c1'), vsphereDomain('vcenter-a', 'dc1', 'c1')] })],
      }),
    ],
    ['its storage class now maps to another datastore', (o) => ({ ...o, providers: [vcenterARemapped] })],
    [
      'its failure domain no longer offers its storage class',
      (o) => ({ ...o, providers: [provider('vcenter-a', { failureDomains: [vsphereDomain('vcenter-a', 'dc1', 'c1', { storage: ['slow'] })] })] }),
    ],
    ['its VMImage is no longer ready on its Provider', (o) => ({ ...o, image: imageNotReady() })],
    [
      'its Provider loses the labels its selector matched',
      (o) => ({ ...selecting(o), providers: [labelled(vcenterA, { env: 'test' })] }),
      [labelled(vcenterA, { env: 'prod' })],
    ],
    ['its Provider is paused', (o) => ({ ...o, providers: [{ ...vcenterA, spec: { ...vcenterA.spec, paused: true } }] })],
  ])('keeps its machine, the same spec, when %s', (_, change, placedOn = [vcenterA]) => {
    for (const policy of ['automatic', 'manual', 'never', undefined] as const) {
      // Placed when its selector (if any) still matched: on the Providers of that time.
      const { vm, machine, record } = placed(change(observed(aPolicyVm(policy), absent())).vm, placedOn);
      const plan = decideVirtualMachine(change(observed(vm, running(machine))), NOW);
      expect(plan.deleteInfra).toEqual([]);
      expect(plan.applyInfra?.metadata.uid).toBe('machine-uid');
      expect(plan.applyInfra?.spec).toEqual(machine.spec);
      expect(plan.events).toEqual([]);
      expect(plan.status?.scheduled).toEqual(record);
      expect(condition(plan, ConditionType.PlacementValid)).toMatchObject({ status: 'True', reason: Reason.PlacementMatches });
    }
  });

  it('keeps it in a failure domain withdrawn over capacity, says so, and still applies the VM spec', () => {
    const { vm, machine } = placed(aPolicyVm('automatic'));
    const resized = { ...vm, spec: { ...vm.spec, hardwareOverride: { cpus: 8 } } };
    const plan = decideVirtualMachine(observed(resized, running(recorded(machine)), [vcenterAOverCapacity]), NOW);
    expect(plan.deleteInfra).toEqual([]);
    expect(plan.applyInfra?.spec).toEqual({ ...machine.spec, numCpus: 8 });
    expect(condition(plan, ConditionType.PlacementValid)).toMatchObject({
      status: 'True',
      reason: Reason.FailureDomainWithdrawn,
      message: expect.stringContaining('CapacityExceeded: memory 95% > 90%') as unknown as string,
    });
    expect(condition(plan, ConditionType.Ready)?.reason).not.toBe(Reason.PlacementInvalid);
  });

  it('leaves the machine as it is in a withdrawn failure domain whose facts it did not record', () => {
    const { vm, machine } = placed(aPolicyVm('automatic'));
    const plan = decideVirtualMachine(observed(vm, running(machine), [vcenterAOverCapacity]), NOW);
    expect(plan.deleteInfra).toEqual([]);
    expect(plan.applyInfra).toBeUndefined();
    expect(condition(plan, ConditionType.PlacementValid)).toMatchObject({ status: 'True', reason: Reason.FailureDomainWithdrawn });
  });
});

describe('a running VirtualMachine whose placement is impossible', () => {
  const provisioningUnreachable = { reason: Reason.ConnectFailed, message: 'dial tcp 127.0.0.1:1: connect: connection refused' };
  const cases: [string, Provider[], (m: InfraMachine) => InfraMachine, Reason][] = [
    ['its Provider is gone', [vcenterB], (m) => m, Reason.ProviderGone],
    ['its Provider is being deleted', [{ ...vcenterA, metadata: { ...vcenterA.metadata, deletionTimestamp: MADE } }, vcenterB], (m) => m, Reason.ProviderGone],
    [
      'its failure domain is gone and its machine reports the backend unreachable',
      [vcenterAWithoutHome],
      (m) => recorded(m, provisioningUnreachable),
      Reason.FailureDomainGone,
    ],
  ];

  it.each(cases)('stays, PlacementValid=False and a Warning once, under the default policy (manual) when %s', (_, providers, machineOf, reason) => {
    const { vm, machine } = placed(aPolicyVm());
    const plan = decideVirtualMachine(observed(vm, running(machineOf(machine)), providers), NOW);
    expect(plan.deleteInfra).toEqual([]);
    expect(plan.applyInfra).toBeUndefined();
    expect(condition(plan, ConditionType.PlacementValid)).toMatchObject({
      status: 'False',
      reason,
      message: expect.stringContaining(`annotate ${Annotation.migrate}=true to recreate it on`) as unknown as string,
    });
    expect(plan.events).toEqual([{ type: 'Warning', reason, message: condition(plan, ConditionType.PlacementValid)?.message }]);
    const again = decideVirtualMachine(observed(afterWrite(vm, plan), running(machineOf(machine)), providers), NOW);
    expect(again.events).toEqual([]);
  });

  it.each(cases)('stays under migrationPolicy never when %s', (_, providers, machineOf, reason) => {
    const { vm, machine } = placed(aPolicyVm('never'));
    const plan = decideVirtualMachine(observed(vm, running(machineOf(machine)), providers), NOW);
    expect(plan.deleteInfra).toEqual([]);
    expect(condition(plan, ConditionType.PlacementValid)).toMatchObject({
      status: 'False',
      reason,
      message: expect.stringContaining(`migrationPolicy never keeps it on ${HOME}`) as unknown as string,
    });
  });

  it.each(cases)('announces a recreate first, then deletes the machine, under migrationPolicy automatic when %s', (_, providers, machineOf, reason) => {
    const { vm, machine, record } = placed(aPolicyVm('automatic'));
    const live = machineOf(machine);
    const announce = decideVirtualMachine(observed(vm, running(live), providers), NOW);
    expect(announce.deleteInfra).toEqual([]);
    expect(announce.takesRecreate).toBe(true);
    const said = condition(announce, ConditionType.PlacementValid);
    expect(said).toMatchObject({ status: 'False', reason: Reason.Recreating });
    expect(said?.message).toMatch(
      new RegExp(`^.+: recreating it on vcenter-[ab]/vcenter-[ab]-dc1-c[12]: VSphereMachine web-1 on ${HOME} is deleted with its VM and disks`),
    );
    expect(announce.events).toEqual([{ type: 'Warning', reason: Reason.Recreating, message: said?.message }]);
    expect(announce.status?.scheduled).toBe(record);
    // The next pass sees the announcement on the VM: the machine goes.
    const next = decideVirtualMachine(observed(afterWrite(vm, announce), running(live), providers), NOW);
    expect(next.deleteInfra).toEqual([live]);
    expect(next.events.filter((e) => e.reason === Reason.Recreating)).toEqual([]);
    expect(next.takesRecreate).toBeUndefined();
    expect(reason).toBeDefined();
  });

  it('recreates a manual VM annotated to migrate, announced first', () => {
    const { vm, machine } = placed(aPolicyVm('manual', { [Annotation.migrate]: 'true' }));
    const announce = decideVirtualMachine(observed(vm, running(machine), [vcenterB]), NOW);
    expect(condition(announce, ConditionType.PlacementValid)?.message).toMatch(/\(migrationPolicy manual, banlieue\.io\/migrate=true\)$/);
    const next = decideVirtualMachine(observed(afterWrite(vm, announce), running(machine), [vcenterB]), NOW);
    expect(next.deleteInfra).toEqual([machine]);
  });

  it('defers a recreate while the namespace has used its recreates of the minute', () => {
    const { vm, machine } = placed(aPolicyVm('automatic'));
    const nextAt = new Date(NOW.getTime() + 42_000);
    const plan = decideVirtualMachine({ ...observed(vm, running(machine), [vcenterB]), recreateBudget: { limit: 5, available: false, nextAt } }, NOW);
    expect(plan.deleteInfra).toEqual([]);
    expect(plan.takesRecreate).toBeUndefined();
    expect(condition(plan, ConditionType.PlacementValid)).toMatchObject({
      status: 'False',
      reason: Reason.RecreateDeferred,
      message: expect.stringContaining(
        `5 VirtualMachines of namespace team-a were recreated in the last minute: tried again at ${nextAt.toISOString()}`,
      ) as unknown as string,
    });
    expect(plan.requeueAfterMs).toBeGreaterThanOrEqual(42_000);
  });

  it('stays, saying why, when there is nowhere to move it', () => {
    const { vm, machine } = placed(aPolicyVm('automatic'));
    const plan = decideVirtualMachine(observed(vm, running(machine), []), NOW);
    expect(plan.deleteInfra).toEqual([]);
    expect(condition(plan, ConditionType.PlacementValid)).toMatchObject({
      status: 'False',
      reason: Reason.ProviderGone,
      message: expect.stringContaining('there is nowhere to move it (No Provider exists in namespace team-a)') as unknown as string,
    });
  });

  it('moves a VM whose spec.placement the user changed to exclude where it runs, and only then', () => {
    const { vm, machine } = placed(aPolicyVm('automatic'));
    const elsewhere = { ...vm, spec: { ...vm.spec, placement: { failureDomainSelector: { matchLabels: { cluster: 'c2' } } } } };
    const announce = decideVirtualMachine(observed(elsewhere, running(machine)), NOW);
    expect(condition(announce, ConditionType.PlacementValid)).toMatchObject({
      status: 'False',
      reason: Reason.Recreating,
      message: expect.stringContaining(
        'spec.placement.failureDomainSelector cluster=c2 no longer matches failure domain vcenter-a/vcenter-a-dc1-c1',
      ) as unknown as string,
    });
    // A machine that does not say what it was placed for (made by an older version) is not moved.
    const unannotated = { ...machine, metadata: { ...machine.metadata, annotations: {} } };
    const kept = decideVirtualMachine(observed(elsewhere, running(unannotated)), NOW);
    expect(kept.deleteInfra).toEqual([]);
    expect(condition(kept, ConditionType.PlacementValid)).toMatchObject({ status: 'True' });
  });

  it('judges by the machine even when the record was forged to match elsewhere', () => {
    const { vm, machine, record } = placed(aPolicyVm('automatic'));
    const forged = { ...record, providerName: 'vcenter-b', failureDomain: 'vcenter-b-dc1-c1' };
    const plan = decideVirtualMachine(observed(withRecord(vm, forged), running(machine), [vcenterB]), NOW);
    expect(plan.events.map((e) => e.reason)).toEqual([Reason.ScheduledRestored, Reason.Recreating]);
    expect(plan.status?.scheduled).toMatchObject({ providerName: 'vcenter-a', failureDomain: 'vcenter-a-dc1-c1' });
  });

  it('deletes neither of two machines of different kinds the VM controls, and says which to delete', () => {
    const { vm, machine } = placed(aPolicyVm());
    const second = { ...machine, kind: 'ProxmoxMachine', metadata: { ...machine.metadata, uid: 'second-uid' } } as InfraMachine;
    const infra = KINDS.map((kind): InfraState =>
      kind === 'VSphereMachine'
        ? { kind, state: 'Present', object: machine }
        : kind === 'ProxmoxMachine'
          ? { kind, state: 'Present', object: second }
          : { kind, state: 'Absent' },
    );
    const plan = decideVirtualMachine(observed(vm, infra), NOW);
    expect(plan.deleteInfra).toEqual([]);
    const message = `the VirtualMachine controls VSphereMachine web-1 on ${HOME} and also ProxmoxMachine web-1: delete the one that is not wanted (its VM is deleted with it)`;
    expect(condition(plan, ConditionType.PlacementValid)).toMatchObject({ status: 'False', reason: Reason.SeveralMachines, message });
    expect(plan.events).toEqual([{ type: 'Warning', reason: Reason.SeveralMachines, message }]);
    expect(decideVirtualMachine(observed(afterWrite(vm, plan), infra), NOW).events).toEqual([]);
  });
});
