// A VirtualMachine whose infrastructure machine refused the spec it now maps to: e.g. a new
// imageRef gives a VSphereMachine a new template, which admission refuses once the VM was
// cloned (infra/api/.../fixed-once-created.ts). The VM runs on as it was, and its status must
// not pretend otherwise: Ready=False with SpecNotApplied naming the field, and
// observedGeneration left where it was, not claiming the new generation is applied.
import type { VirtualMachine } from '../../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import { ConditionType, Reason } from '../../../infra/api/conditions.js';
import { setConditions } from '../../runtime/conditions.js';
import type { VmPlan } from './decide.js';

/** A write of the VM's infrastructure machine (or user-data Secret) refused by admission. */
export interface SpecRefused {
  readonly reason: typeof Reason.SpecNotApplied;
  readonly message: string;
}

/** The refusal of the update of `object`, in the API server's words (they name the field and the rule). */
export function specRefused(object: { readonly kind: string; readonly metadata: { readonly name?: string } }, apiMessage: string): SpecRefused {
  return { reason: Reason.SpecNotApplied, message: `${object.kind} ${object.metadata.name ?? ''} is not updated: ${apiMessage}` };
}

/** The planned status once `refused` came back instead of the plan's write. */
export function decideSpecNotApplied(
  vm: VirtualMachine,
  plan: Pick<VmPlan, 'status' | 'requeueAfterMs'>,
  refused: SpecRefused,
  now: Date,
): Pick<VmPlan, 'status' | 'requeueAfterMs'> {
  const requeue = plan.requeueAfterMs !== undefined ? { requeueAfterMs: plan.requeueAfterMs } : {};
  if (!plan.status) return requeue;
  const { observedGeneration: _claimed, ...rest } = plan.status;
  const applied = vm.status?.observedGeneration;
  // Ready's transition is judged against the VM's own Ready, not the plan's: that one said True, and a
  // refusal repeated on every pass would otherwise move lastTransitionTime, and write, each time.
  const input = { type: ConditionType.Ready, status: 'False' as const, reason: refused.reason, message: refused.message };
  const [ready] = setConditions(
    vm.status?.conditions?.filter((c) => c.type === ConditionType.Ready),
    [input],
    now,
  );
  const conditions = (plan.status.conditions ?? []).map((c) => (c.type === ConditionType.Ready && ready ? ready : c));
  return { ...requeue, status: { ...rest, ...(applied !== undefined ? { observedGeneration: applied } : {}), conditions } };
}
