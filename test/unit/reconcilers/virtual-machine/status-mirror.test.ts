import { describe, expect, it } from 'vitest';
import type { Condition } from '../../../../infra/api/meta.js';
import { ConditionType, Reason } from '../../../../infra/api/conditions.js';
import type { ConditionInput } from '../../../../controller/runtime/conditions.js';
import { mirrorInfraStatus, mirrorsAtOnce, readyCondition, type InfraMachineRead } from '../../../../controller/reconcilers/virtual-machine/status-mirror.js';

const readyTrue: Condition = {
  type: ConditionType.Ready,
  status: 'True',
  reason: 'Provisioned',
  message: '',
  lastTransitionTime: '2026-01-01T00:00:00Z',
};

function infra(status: InfraMachineRead['status']): InfraMachineRead {
  return { kind: 'VSphereMachine', metadata: { name: 'web-1' }, ...(status ? { status } : {}) };
}

describe('infra status mirror', () => {
  it('copies initialization, addresses, power, the last restart and the Ready condition', () => {
    const restart = { requestedAt: '2026-01-01T00:00:00.000Z', phase: 'Restarted', lastTransitionTime: '2026-01-01T00:00:09Z' } as const;
    const mirrored = mirrorInfraStatus(
      infra({
        initialization: { provisioned: true },
        addresses: [{ type: 'InternalIP', address: '10.0.0.10' }],
        observedPowerState: 'PoweredOn',
        restart,
        conditions: [{ ...readyTrue, type: 'Other', status: 'False' }, readyTrue],
      }),
    );
    expect(mirrored).toEqual({
      fields: {
        initialization: { provisioned: true },
        addresses: [{ type: 'InternalIP', address: '10.0.0.10' }],
        observedPowerState: 'PoweredOn',
        restart,
      },
      infrastructureReady: { type: ConditionType.InfrastructureReady, status: 'True', reason: 'Provisioned', message: '' },
    });
  });

  it('copies a False Ready with its reason and message', () => {
    const notReady: Condition = { ...readyTrue, status: 'False', reason: 'CloneFailed', message: 'datastore ds1 is full' };
    expect(mirrorInfraStatus(infra({ conditions: [notReady] })).infrastructureReady).toEqual({
      type: ConditionType.InfrastructureReady,
      status: 'False',
      reason: 'CloneFailed',
      message: 'datastore ds1 is full',
    });
  });

  it.each<[string, InfraMachineRead['status']]>([
    ['no status', undefined],
    ['status without conditions', { observedPowerState: 'PoweredOff' }],
  ])('is Pending with only what exists when the infra machine has %s', (_, status) => {
    const mirrored = mirrorInfraStatus(infra(status));
    expect(mirrored.infrastructureReady).toEqual({
      type: ConditionType.InfrastructureReady,
      status: 'False',
      reason: Reason.Pending,
      message: 'VSphereMachine web-1 has no Ready condition yet',
    });
    expect(Object.keys(mirrored.fields)).toEqual(status?.observedPowerState ? ['observedPowerState'] : []);
  });

  it.each([
    [{ kind: 'ProxmoxMachine', name: 'web-1' }, 'ProxmoxMachine web-1 does not exist yet'],
    [undefined, 'The infrastructure object does not exist yet'],
  ])('is Pending and copies nothing when the infra machine does not exist (%j)', (expected, message) => {
    expect(mirrorInfraStatus(undefined, expected)).toEqual({
      fields: {},
      infrastructureReady: { type: ConditionType.InfrastructureReady, status: 'False', reason: Reason.Pending, message },
    });
  });
});

const scheduled: ConditionInput = { type: ConditionType.Scheduled, status: 'True', reason: Reason.Scheduled };
const notScheduled: ConditionInput = {
  type: ConditionType.Scheduled,
  status: 'False',
  reason: Reason.NoProviderMatched,
  message: 'no Provider matches spec.placement.providerSelector',
};
const placementOk: ConditionInput = { type: ConditionType.PlacementValid, status: 'True', reason: Reason.PlacementMatches };
const placementBad: ConditionInput = {
  type: ConditionType.PlacementValid,
  status: 'False',
  reason: Reason.FailureDomainGone,
  message: 'fd-1 no longer matches',
};
const infraReady: ConditionInput = { type: ConditionType.InfrastructureReady, status: 'True', reason: Reason.Reconciled };
const infraPending: ConditionInput = { type: ConditionType.InfrastructureReady, status: 'False', reason: Reason.Pending };

describe('VM Ready', () => {
  it.each<[string, ConditionInput, ConditionInput | undefined, ConditionInput, Omit<ConditionInput, 'type'>]>([
    ['everything holds', scheduled, placementOk, infraReady, { status: 'True', reason: Reason.Reconciled, message: '' }],
    ['PlacementValid is unset', scheduled, undefined, infraReady, { status: 'True', reason: Reason.Reconciled, message: '' }],
    [
      'scheduling failed',
      notScheduled,
      placementBad,
      infraPending,
      { status: 'False', reason: Reason.Scheduling, message: 'Not scheduled: no Provider matches spec.placement.providerSelector' },
    ],
    [
      'the placement drifted',
      scheduled,
      placementBad,
      infraReady,
      { status: 'False', reason: Reason.PlacementInvalid, message: 'Placement no longer valid: fd-1 no longer matches' },
    ],
    [
      'the infrastructure is not ready',
      scheduled,
      placementOk,
      infraPending,
      { status: 'False', reason: Reason.InfrastructureNotReady, message: 'Infrastructure not ready (Pending)' },
    ],
    [
      'the infrastructure readiness is Unknown',
      scheduled,
      undefined,
      { ...infraReady, status: 'Unknown', message: 'provider restarting' },
      { status: 'False', reason: Reason.InfrastructureNotReady, message: 'Infrastructure not ready: provider restarting' },
    ],
  ])('is as expected when %s', (_, s, p, i, expected) => {
    expect(readyCondition(s, p, i)).toEqual({ type: ConditionType.Ready, ...expected });
  });
});

describe('which machine changes the VM mirrors at once', () => {
  const notReady: Condition = { ...readyTrue, status: 'False', reason: 'Provisioning', message: 'Cloning' };
  it('folds intermediate steps: a new message, addresses, power state', () => {
    const before = infra({ conditions: [notReady] });
    expect(mirrorsAtOnce(infra({ conditions: [{ ...notReady, message: 'Powering on' }], observedPowerState: 'PoweredOn' }), before)).toBe(false);
    expect(mirrorsAtOnce(infra({ conditions: [notReady], addresses: [{ type: 'InternalIP', address: '10.0.0.10' }] }), before)).toBe(false);
  });

  it('folds a machine just made and its first Ready=False', () => {
    expect(mirrorsAtOnce(infra({ conditions: [notReady] }), infra(undefined))).toBe(false);
    expect(mirrorsAtOnce(infra(undefined), undefined)).toBe(false);
  });

  it('goes at once when the machine becomes Ready or stops being Ready, and when its deletion starts', () => {
    const before = infra({ conditions: [notReady] });
    expect(mirrorsAtOnce(infra({ conditions: [readyTrue] }), before)).toBe(true);
    expect(mirrorsAtOnce(before, infra({ conditions: [readyTrue] }))).toBe(true);
    expect(mirrorsAtOnce(infra({ conditions: [readyTrue] }), undefined)).toBe(true);
    expect(mirrorsAtOnce({ ...before, metadata: { name: 'web-1', deletionTimestamp: '2026-01-01T00:00:00Z' } }, before)).toBe(true);
  });
});
