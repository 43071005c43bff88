// A VirtualMachine whose machine refused its new spec says so and does not claim the new
// generation; a refusal met again on a later pass changes nothing (no write at idle).
import { describe, expect, it } from 'vitest';
import type { Condition } from '../../../../infra/api/meta.js';
import { ConditionType, Reason } from '../../../../infra/api/conditions.js';
import { decideSpecNotApplied, specRefused } from '../../../../controller/reconcilers/virtual-machine/spec-not-applied.js';
import { aVm } from './fixtures.js';

const EARLIER = '2026-01-01T00:00:00Z';
const NOW = new Date('2026-01-01T00:10:00Z');
const LATER = new Date('2026-01-01T00:20:00Z');

const condition = (type: string, status: 'True' | 'False', reason: string, message = ''): Condition => ({
  type,
  status,
  reason,
  message,
  lastTransitionTime: EARLIER,
});

const machine = { kind: 'VSphereMachine', metadata: { name: 'web-1' } };
const refused = specRefused(
  machine,
  'VSphereMachine.infrastructure.banlieue.io "web-1" is invalid: spec.template: Invalid value: "object": spec.template cannot change once the VM was created',
);

/** What decide planned for generation 3: the new spec applied, Ready True. */
const planned = {
  observedGeneration: 3,
  conditions: [
    condition(ConditionType.Scheduled, 'True', Reason.Scheduled),
    condition(ConditionType.InfrastructureReady, 'True', Reason.Reconciled),
    condition(ConditionType.Ready, 'True', Reason.Reconciled),
  ],
};

describe('a VirtualMachine whose infrastructure machine refused its spec', () => {
  const vm = aVm({}, { generation: 3 });
  const applied = { ...vm, status: { observedGeneration: 2, conditions: planned.conditions } };

  it('marks Ready False with SpecNotApplied naming the machine and the field', () => {
    const { status } = decideSpecNotApplied(applied, { status: planned }, refused, NOW);
    expect(status?.conditions?.find((c) => c.type === ConditionType.Ready)).toEqual({
      type: ConditionType.Ready,
      status: 'False',
      reason: Reason.SpecNotApplied,
      message: expect.stringMatching(/^VSphereMachine web-1 is not updated: .*spec\.template cannot change once the VM was created$/),
      lastTransitionTime: '2026-01-01T00:10:00Z',
    });
    expect(status?.conditions?.find((c) => c.type === ConditionType.InfrastructureReady)?.status).toBe('True');
  });

  it('keeps observedGeneration at the generation last applied', () => {
    expect(decideSpecNotApplied(applied, { status: planned }, refused, NOW).status?.observedGeneration).toBe(2);
    expect(decideSpecNotApplied(vm, { status: planned }, refused, NOW).status).not.toHaveProperty('observedGeneration');
  });

  it('decides the very status it reported when the refusal comes back on a later pass', () => {
    const first = decideSpecNotApplied(applied, { status: planned }, refused, NOW).status;
    if (!first) throw new Error('decideSpecNotApplied decided no status for a refused spec');
    const reported = { ...vm, status: first };
    // decide plans Ready True again from the reported status (new transition time), and the write is refused again.
    const replanned = {
      ...planned,
      conditions: planned.conditions.map((c) => (c.type === ConditionType.Ready ? { ...c, lastTransitionTime: '2026-01-01T00:20:00Z' } : c)),
    };
    expect(decideSpecNotApplied(reported, { status: replanned }, refused, LATER).status).toEqual(first);
  });

  it('keeps when to come back', () => {
    expect(decideSpecNotApplied(applied, { status: planned, requeueAfterMs: 5_000 }, refused, NOW).requeueAfterMs).toBe(5_000);
  });
});
