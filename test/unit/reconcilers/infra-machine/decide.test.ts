// decideMachineStatus: an InfraMachine's status from the outcome of one pass.
import { describe, expect, it } from 'vitest';
import type { Condition } from '../../../../infra/api/meta.js';
import type { MachineAddress } from '../../../../infra/api/machine-fields.js';
import { ConditionType, Reason } from '../../../../infra/api/conditions.js';
import { Annotation } from '../../../../infra/api/well-known.js';
import type { MachineObservation } from '../../../../controller/backends/backend.js';
import {
  decideMachineStatus,
  isDeletionReported,
  isProvisioned,
  mayHaveCreated,
  taskPollDelay,
  type InfraMachineStatus,
  type PassOutcome,
  type StatusSubject,
} from '../../../../controller/reconcilers/infra-machine/decide.js';
import { findCondition } from '../../../../controller/runtime/conditions.js';

const T0 = new Date('2025-01-01T00:00:00.000Z');
const T1 = new Date('2025-01-01T00:05:00.000Z');
const UUID = '74e4d702-bafd-5e07-8195-ab7a57a18b2a';

const ADDRESSES: MachineAddress[] = [
  { type: 'InternalIP', address: '10.0.0.5' },
  { type: 'InternalIP', address: '2001:db8::5' },
];

/** What an earlier pass wrote: provisioned, running, with an address and a vmRef. */
const PROVISIONED = {
  initialization: { provisioned: true },
  addresses: [{ type: 'InternalIP', address: '10.0.0.4' }],
  failureDomain: 'fd-1',
  observedPowerState: 'PoweredOn',
  vmRef: 'vm-41',
  biosUuid: UUID,
  observedGeneration: 1,
  conditions: [{ type: ConditionType.Ready, status: 'True', reason: Reason.Reconciled, message: '', lastTransitionTime: '2024-12-31T00:00:00Z' }],
} satisfies InfraMachineStatus;

function machine(
  opts: { spec?: StatusSubject['spec']; status?: InfraMachineStatus; annotations?: Record<string, string>; generation?: number } = {},
): StatusSubject {
  return {
    metadata: { generation: opts.generation ?? 2, ...(opts.annotations ? { annotations: opts.annotations } : {}) },
    spec: opts.spec ?? {},
    ...(opts.status ? { status: opts.status } : {}),
  };
}

function observation(change: Partial<MachineObservation> = {}): MachineObservation {
  return {
    ref: 'vm-42',
    powerState: 'PoweredOn',
    addresses: ADDRESSES,
    actions: [],
    statusFields: { vmRef: 'vm-42', biosUuid: UUID },
    ...change,
  };
}

/** Where the VM was created (status.placement). */
const PLACEMENT = { provider: 'north', failureDomain: 'fd-2', location: { datacenter: 'dc-1' } };

function observed(found: MachineObservation | undefined, placementChange?: string): PassOutcome {
  return {
    kind: 'observed',
    observation: found,
    placement: PLACEMENT,
    ...(placementChange ? { placementChange } : {}),
    backendStatus: found?.statusFields ?? {},
    uuid: UUID,
  };
}

const ready = (status: InfraMachineStatus): Condition | undefined => findCondition(status.conditions, ConditionType.Ready);
const paused = (status: InfraMachineStatus): Condition | undefined => findCondition(status.conditions, ConditionType.Paused);

describe('InfraMachine status', () => {
  describe('paused', () => {
    it('keeps every field and sets Paused True, naming what pauses it', () => {
      const status = decideMachineStatus(machine({ annotations: { 'cluster.x-k8s.io/paused': '' }, status: PROVISIONED }), { kind: 'paused' }, T0);

      expect(status).toEqual({ ...PROVISIONED, conditions: [...PROVISIONED.conditions, expect.any(Object)] });
      expect(paused(status)).toEqual({
        type: ConditionType.Paused,
        status: 'True',
        reason: Reason.Paused,
        message: 'Reconciliation is paused: annotation cluster.x-k8s.io/paused is set',
        lastTransitionTime: '2025-01-01T00:00:00Z',
        observedGeneration: 2,
      });
      expect(ready(status)).toEqual(ready(PROVISIONED));
    });

    it('names the CAPI paused annotation when that is what pauses it', () => {
      const status = decideMachineStatus(machine({ annotations: { [Annotation.capiPaused]: '' } }), { kind: 'paused' }, T0);
      expect(paused(status)).toMatchObject({ status: 'True', message: `Reconciliation is paused: annotation ${Annotation.capiPaused} is set` });
    });

    it('names the owning CAPI Cluster when its spec.paused is what pauses the machine', () => {
      const status = decideMachineStatus(machine({ status: PROVISIONED }), { kind: 'paused', pausedCluster: 'work' }, T0);
      expect(paused(status)).toMatchObject({ status: 'True', message: 'Reconciliation is paused: Cluster work has spec.paused' });
      expect(status.addresses).toEqual(PROVISIONED.addresses);
    });

    it('does not record the generation as observed', () => {
      const status = decideMachineStatus(
        machine({ annotations: { 'cluster.x-k8s.io/paused': '' }, status: PROVISIONED, generation: 5 }),
        { kind: 'paused' },
        T0,
      );
      expect(status.observedGeneration).toBe(1);
    });
  });

  describe('blocked', () => {
    const blocked: PassOutcome = {
      kind: 'blocked',
      reason: Reason.ProviderNotFound,
      message: 'Provider north (spec.providerRef) not found in namespace team-a',
    };

    it('keeps addresses, provisioned and backend fields and sets Ready False with the reason and message', () => {
      const status = decideMachineStatus(machine({ status: PROVISIONED }), blocked, T0);

      expect(status).toMatchObject({
        initialization: { provisioned: true },
        addresses: PROVISIONED.addresses,
        failureDomain: 'fd-1',
        observedPowerState: 'PoweredOn',
        vmRef: 'vm-41',
        observedGeneration: 1,
      });
      expect(ready(status)).toEqual({
        type: ConditionType.Ready,
        status: 'False',
        reason: Reason.ProviderNotFound,
        message: 'Provider north (spec.providerRef) not found in namespace team-a',
        lastTransitionTime: '2025-01-01T00:00:00Z',
      });
      expect(paused(status)).toMatchObject({ status: 'False', reason: Reason.NotPaused });
    });

    it('writes only conditions on a machine with no status yet', () => {
      const status = decideMachineStatus(machine(), blocked, T0);
      expect(Object.keys(status)).toEqual(['conditions']);
      expect(isProvisioned({ status })).toBe(false);
    });
  });

  describe('deleting', () => {
    it('keeps what is known and sets Ready False with Deleting and the message, until the finalizer goes', () => {
      const status = decideMachineStatus(machine({ status: PROVISIONED }), { kind: 'deleting', message: `deleting the VM with UUID ${UUID}` }, T1);
      expect(findCondition(status.conditions, ConditionType.Ready)).toMatchObject({
        status: 'False',
        reason: Reason.Deleting,
        message: `deleting the VM with UUID ${UUID}`,
      });
      expect(status).toMatchObject({ initialization: { provisioned: true }, addresses: PROVISIONED.addresses, vmRef: 'vm-41', failureDomain: 'fd-1' });
    });

    it('says what the backend awaits when it names a reason', () => {
      const status = decideMachineStatus(machine({ status: PROVISIONED }), { kind: 'deleting', message: 'the guest powers off', reason: Reason.Stopping }, T1);
      expect(findCondition(status.conditions, ConditionType.Ready)).toMatchObject({
        status: 'False',
        reason: Reason.Stopping,
        message: 'the guest powers off',
      });
    });

    it.each([
      [Reason.Deleting, true],
      [Reason.DeletionFailed, true],
      [Reason.Stopping, true],
      [Reason.Reconciled, false],
      [Reason.WaitingForAddress, false],
      [Reason.Provisioning, false],
    ])('counts Ready %s as a deletion already reported: %s', (reason, reported) => {
      const ready: Condition = {
        type: ConditionType.Ready,
        status: reason === Reason.Reconciled ? 'True' : 'False',
        reason,
        message: '',
        lastTransitionTime: '2025-01-01T00:00:00Z',
      };
      expect(isDeletionReported({ conditions: [ready] })).toBe(reported);
    });

    it('counts a machine with no status as not reported', () => {
      expect(isDeletionReported(undefined)).toBe(false);
    });
  });

  describe('where the VM is created', () => {
    it('records the place before the backend is asked to create; a new machine says nothing more (CAPI would mirror it)', () => {
      const status = decideMachineStatus(machine(), { kind: 'placing', placement: PLACEMENT }, T0);
      expect(status.placement).toEqual(PLACEMENT);
      expect(status.failureDomain).toBeUndefined();
      expect(ready(status)).toBeUndefined();
      expect(mayHaveCreated({ status })).toBe(true);
    });

    it('says a machine that told why it waited no longer waits once its place is recorded', () => {
      const waited = decideMachineStatus(machine(), { kind: 'blocked', reason: Reason.MacAddressInUse, message: 'held' }, T0);
      const status = decideMachineStatus(machine({ status: waited }), { kind: 'placing', placement: PLACEMENT }, T1);
      expect(status).toMatchObject({ placement: PLACEMENT, failureDomain: 'fd-2' });
      expect(ready(status)).toMatchObject({ status: 'False', reason: Reason.Provisioning, message: 'creating the VM on north/fd-2' });
    });

    it('keeps the record with the create task, and through a blocked pass', () => {
      const started = decideMachineStatus(machine(), { kind: 'inProgress', taskRef: 'task-1', message: 'cloning', placement: PLACEMENT }, T0);
      expect(started).toMatchObject({ taskRef: 'task-1', placement: PLACEMENT });
      const blocked = decideMachineStatus(
        machine({ status: started }),
        { kind: 'blocked', reason: Reason.ProvisionFailed, message: 'refused', taskEnded: true },
        T1,
      );
      expect(blocked.placement).toEqual(PLACEMENT);
      expect(blocked.taskRef).toBeUndefined();
    });

    it('is Ready False with PlacementChanged, and the generation not observed, when the machine names another place', () => {
      const said = 'the machine now names Provider south, but its VM was created on north/fd-2';
      const status = decideMachineStatus(machine({ status: PROVISIONED, generation: 3 }), observed(observation(), said), T0);
      expect(ready(status)).toMatchObject({ status: 'False', reason: Reason.PlacementChanged, message: said });
      expect(status).toMatchObject({ placement: PLACEMENT, initialization: { provisioned: true }, observedPowerState: 'PoweredOn', observedGeneration: 1 });
    });

    it.each([
      ['no status', undefined, false],
      ['only conditions (e.g. its failure domain never published)', { conditions: PROVISIONED.conditions }, false],
      ['a recorded place', { placement: PLACEMENT }, true],
      ['a create task', { taskRef: 'task-1' }, true],
      ['provisioned, by a version that kept no record', { initialization: { provisioned: true } }, true],
    ] as const)('tells whether a backend may hold a VM of a machine with %s: %s', (_what, status, may) => {
      expect(mayHaveCreated(status ? { status } : {})).toBe(may);
    });
  });

  describe('observed', () => {
    it('is Ready True when the VM is on with an address, and reports what it found', () => {
      const status = decideMachineStatus(machine(), observed(observation()), T0);

      expect(status).toEqual({
        initialization: { provisioned: true },
        observedPowerState: 'PoweredOn',
        addresses: ADDRESSES,
        placement: PLACEMENT,
        failureDomain: 'fd-2',
        vmRef: 'vm-42',
        biosUuid: UUID,
        observedGeneration: 2,
        conditions: [
          { type: ConditionType.Ready, status: 'True', reason: Reason.Reconciled, message: '', lastTransitionTime: '2025-01-01T00:00:00Z' },
          {
            type: ConditionType.Paused,
            status: 'False',
            reason: Reason.NotPaused,
            message: '',
            lastTransitionTime: '2025-01-01T00:00:00Z',
            observedGeneration: 2,
          },
        ],
      });
      expect(isProvisioned({ status })).toBe(true);
    });

    it('reports the first addresses a status holds when the guest reports more, and is Ready', () => {
      const many = Array.from({ length: 300 }, (_, i): MachineAddress => ({ type: 'InternalIP', address: `10.96.${i >> 8}.${i & 255}` }));
      const status = decideMachineStatus(machine({ status: PROVISIONED }), observed(observation({ addresses: many })), T0);
      expect(status.addresses).toEqual(many.slice(0, 32));
      expect(findCondition(status.conditions, ConditionType.Ready)?.status).toBe('True');
    });

    it('replaces the addresses, failure domain and backend fields an earlier pass wrote', () => {
      const status = decideMachineStatus(machine({ status: PROVISIONED }), observed(observation({ addresses: [ADDRESSES[0] as MachineAddress] })), T0);
      expect(status).toMatchObject({ addresses: [ADDRESSES[0]], failureDomain: 'fd-2', vmRef: 'vm-42', observedGeneration: 2 });
    });

    it('is Ready False with WaitingForAddress when the VM is on but the guest reports no address', () => {
      const status = decideMachineStatus(machine(), observed(observation({ addresses: [] })), T0);

      expect(status).toMatchObject({ initialization: { provisioned: true }, observedPowerState: 'PoweredOn', addresses: [] });
      expect(ready(status)).toMatchObject({
        status: 'False',
        reason: Reason.WaitingForAddress,
        message: 'powered on; waiting for the guest to report an IP address',
      });
    });

    it('is Ready with no address when the VM has no network interface: none will come', () => {
      const status = decideMachineStatus(machine(), observed(observation({ addresses: [], withoutNetwork: true })), T0);

      expect(status).toMatchObject({ observedPowerState: 'PoweredOn', addresses: [] });
      expect(ready(status)).toMatchObject({ status: 'True', reason: Reason.Reconciled });
    });

    it.each([
      [undefined, 'PoweredOff', 'the VM is PoweredOff, to be PoweredOn'],
      ['PoweredOn', 'Suspended', 'the VM is Suspended, to be PoweredOn'],
      ['PoweredOff', 'PoweredOn', 'the VM is PoweredOn, to be PoweredOff'],
      ['Suspended', 'PoweredOff', 'the VM is PoweredOff, to be Suspended'],
    ] as const)('is Ready False with Pending when desired %s but the VM is %s', (desired, actual, message) => {
      const spec = desired ? { desiredPowerState: desired } : {};
      const status = decideMachineStatus(machine({ spec }), observed(observation({ powerState: actual })), T0);

      expect(status).toMatchObject({ initialization: { provisioned: true }, observedPowerState: actual });
      expect(ready(status)).toMatchObject({ status: 'False', reason: Reason.Pending, message });
    });

    it.each(['PoweredOff', 'Suspended'] as const)('is Ready True without an address when desired %s and the VM is so', (state) => {
      const status = decideMachineStatus(machine({ spec: { desiredPowerState: state } }), observed(observation({ powerState: state, addresses: [] })), T0);

      expect(status).toMatchObject({ initialization: { provisioned: true }, observedPowerState: state, addresses: [] });
      expect(ready(status)).toMatchObject({ status: 'True', reason: Reason.Reconciled });
    });

    it('is Ready False with BackendMissing, naming the UUID, when the provisioned VM is gone', () => {
      const status = decideMachineStatus(machine({ status: PROVISIONED }), observed(undefined), T0);

      expect(ready(status)).toMatchObject({ status: 'False', reason: Reason.BackendMissing, lastTransitionTime: '2025-01-01T00:00:00Z' });
      expect(ready(status)?.message).toContain(`UUID ${UUID}`);
      expect(ready(status)?.message).toContain('delete this machine to replace it');
      expect(status).toMatchObject({ initialization: { provisioned: true }, vmRef: 'vm-41', failureDomain: 'fd-2', observedGeneration: 2 });
      // The addresses and power state of a VM that is gone are not advertised.
      expect(status.addresses).toEqual([]);
      expect(status.observedPowerState).toBeUndefined();
    });

    it('keeps Ready, says what waits, and does not mark the generation observed while a spec change is pending', () => {
      const pending = 'CPU/memory change (4 CPUs) applies once the VM is powered off: InvalidPowerState';
      const status = decideMachineStatus(machine({ status: PROVISIONED, generation: 5 }), observed(observation({ pending })), T0);
      expect(ready(status)).toMatchObject({ status: 'True', reason: Reason.Reconciled, message: pending });
      expect(status.observedGeneration).toBe(PROVISIONED.observedGeneration);
    });

    it('leaves provisioned unset when there is no VM yet', () => {
      const status = decideMachineStatus(machine(), observed(undefined), T0);
      expect(isProvisioned({ status })).toBe(false);
      expect(status.addresses).toBeUndefined();
    });

    it('leaves observedGeneration alone when the object has no generation', () => {
      const subject: StatusSubject = { metadata: {}, spec: {}, status: { observedGeneration: 1 } };
      expect(decideMachineStatus(subject, observed(observation()), T0).observedGeneration).toBe(1);
    });
  });

  describe('lastTransitionTime', () => {
    it('is kept while Ready keeps its status, even when the reason changes', () => {
      const first = decideMachineStatus(machine(), observed(observation({ addresses: [] })), T0);
      const second = decideMachineStatus(machine({ status: first }), observed(observation({ powerState: 'PoweredOff' })), T1);

      expect(ready(second)).toMatchObject({ status: 'False', reason: Reason.Pending, lastTransitionTime: '2025-01-01T00:00:00Z' });
    });

    it('is kept when nothing changed, so a repeated pass writes the same status', () => {
      const first = decideMachineStatus(machine(), observed(observation()), T0);
      const second = decideMachineStatus(machine({ status: first }), observed(observation()), T1);

      expect(second).toEqual(first);
    });

    it('moves when Ready changes status', () => {
      const first = decideMachineStatus(machine(), observed(observation({ addresses: [] })), T0);
      const second = decideMachineStatus(machine({ status: first }), observed(observation()), T1);

      expect(ready(second)).toMatchObject({ status: 'True', lastTransitionTime: '2025-01-01T00:05:00Z' });
      expect(paused(second)?.lastTransitionTime).toBe('2025-01-01T00:00:00Z');
    });
  });
});

describe('reading a running backend task again', () => {
  const provisioningSince = (iso: string): InfraMachineStatus => ({
    taskRef: 'task-1',
    conditions: [{ type: 'Ready', status: 'False', reason: Reason.Provisioning, message: 'CloneVM_Task task-1 is running', lastTransitionTime: iso }],
  });

  it.each([
    ['just started', '2026-01-01T00:00:00Z', 500],
    ['running 3 s', '2025-12-31T23:59:57Z', 750],
    ['running 8 s', '2025-12-31T23:59:52Z', 2_000],
    ['running 16 s', '2025-12-31T23:59:44Z', 4_000],
    ['running 10 min', '2025-12-31T23:50:00Z', 5_000],
  ])('waits longer the longer the task has run: %s', (_what, since, delay) => {
    expect(taskPollDelay(provisioningSince(since), new Date('2026-01-01T00:00:00Z'), 1_000)).toBe(delay);
  });

  it('looks at a task it just started after a quarter of the minimum: a linked clone is often done by then', () => {
    expect(taskPollDelay(undefined, new Date('2026-01-01T00:00:00Z'), 1_000)).toBe(250);
    // Placed and Provisioning since, but no task remembered yet: this pass started it.
    const placed: InfraMachineStatus = {
      conditions: [{ type: 'Ready', status: 'False', reason: Reason.Provisioning, message: '', lastTransitionTime: '2025-12-31T23:59:00Z' }],
    };
    expect(taskPollDelay(placed, new Date('2026-01-01T00:00:00Z'), 1_000)).toBe(250);
  });
});
