// A restart asked for in spec.restartRequestedAt (pure): carried out once, as two power moves the
// backends already make (PoweredOff, graceful where the backend can; then PoweredOn), with how far
// it went in status.restart. The phase is written at the end of every pass, and the pass that sees
// the VM off only records PoweringOn: the VM is powered on by a later pass, which is then sure the
// shutdown was this request's. So a provider killed at any point neither loses the request (no
// Restarted record yet) nor repeats it (a VM found on in PoweringOn was powered on: Restarted).
// docs/adr/0032-restart-is-a-spec-timestamp.md
import type { PowerState, RestartPhase, RestartStatus } from '../../../infra/api/machine-fields.js';
import { Reason } from '../../../infra/api/conditions.js';
import type { InfraMachineContractSpec, InfraMachineContractStatus } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/infra-machine.js';

export interface RestartSubject {
  readonly spec: Pick<InfraMachineContractSpec, 'desiredPowerState' | 'restartRequestedAt'>;
  readonly status?: Pick<InfraMachineContractStatus, 'restart'>;
}

/** What a pass does about spec.restartRequestedAt. */
export type RestartPlan =
  /** No request, or the last one is over. */
  | { readonly kind: 'none' }
  /** A request not to carry out (`why`): recorded Skipped. */
  | { readonly kind: 'skip'; readonly requestedAt: string; readonly why: string }
  /** A request under way: the pass drives the VM to `power` instead of spec.desiredPowerState. */
  | { readonly kind: 'drive'; readonly requestedAt: string; readonly phase: 'ShuttingDown' | 'PoweringOn'; readonly power: PowerState };

const OVER: ReadonlySet<RestartPhase> = new Set(['Restarted', 'Skipped']);

/** The plan for this pass; `provisioned`: the VM has booted once (a request made before is moot). */
export function decideRestart(machine: RestartSubject, provisioned: boolean): RestartPlan {
  const requestedAt = machine.spec.restartRequestedAt;
  if (requestedAt === undefined) return { kind: 'none' };
  const record = machine.status?.restart;
  const same = record?.requestedAt === requestedAt;
  if (same && OVER.has(record.phase)) return { kind: 'none' };
  const desired = machine.spec.desiredPowerState ?? 'PoweredOn';
  if (desired !== 'PoweredOn') return { kind: 'skip', requestedAt, why: `spec.desiredPowerState is ${desired}` };
  if (!provisioned) return { kind: 'skip', requestedAt, why: 'the VM had not booted yet' };
  const phase = same && record.phase === 'PoweringOn' ? 'PoweringOn' : 'ShuttingDown';
  return { kind: 'drive', requestedAt, phase, power: phase === 'ShuttingDown' ? 'PoweredOff' : 'PoweredOn' };
}

/**
 * status.restart after a pass that saw the VM `power` (undefined: the pass did not see it, e.g. a
 * backend task still runs): undefined when the plan changes nothing.
 */
export function restartAfter(plan: RestartPlan, power: PowerState | undefined, previous: RestartStatus | undefined, now: Date): RestartStatus | undefined {
  if (plan.kind === 'none') return undefined;
  const phase = plan.kind === 'skip' ? 'Skipped' : nextPhase(plan.phase, power);
  const unchanged = previous?.requestedAt === plan.requestedAt && previous.phase === phase;
  return { requestedAt: plan.requestedAt, phase, lastTransitionTime: unchanged ? previous.lastTransitionTime : now.toISOString() };
}

function nextPhase(phase: 'ShuttingDown' | 'PoweringOn', power: PowerState | undefined): RestartPhase {
  if (phase === 'ShuttingDown') return power === 'PoweredOff' ? 'PoweringOn' : 'ShuttingDown';
  return power === 'PoweredOn' ? 'Restarted' : 'PoweringOn';
}

/** Whether `record` is a restart still under way. */
export function isRestarting(record: RestartStatus | undefined): boolean {
  return record !== undefined && !OVER.has(record.phase);
}

/** What Ready=False Restarting says while `record` is under way. */
export function restartingMessage(record: RestartStatus): string {
  const what = record.phase === 'ShuttingDown' ? 'the guest is shutting down' : 'the VM is off and being powered on again';
  return `restart requested at ${record.requestedAt}: ${what}`;
}

/** The Event a change of status.restart makes: one when a restart begins, ends, or is skipped. */
export function restartEvent(
  before: RestartStatus | undefined,
  after: RestartStatus | undefined,
  plan: RestartPlan,
): { readonly reason: Reason; readonly message: string } | undefined {
  if (!after || (before?.requestedAt === after.requestedAt && before.phase === after.phase)) return undefined;
  const newRequest = before?.requestedAt !== after.requestedAt;
  if (after.phase === 'Skipped')
    return {
      reason: Reason.RestartSkipped,
      message: `Not restarting the VM (requested at ${after.requestedAt}): ${plan.kind === 'skip' ? plan.why : 'skipped'}`,
    };
  if (after.phase === 'Restarted')
    return { reason: Reason.Restarted, message: `Restarted the VM (requested at ${after.requestedAt}): shut down, then powered on again` };
  if (newRequest)
    return { reason: Reason.Restarting, message: `Restarting the VM (requested at ${after.requestedAt}): shutting the guest down, then powering it on` };
  return undefined;
}

/** The machine request of a pass that drives a restart: the power of its phase instead of spec.desiredPowerState. */
export function withRestartPower<R extends { readonly spec: unknown }>(request: R, plan: RestartPlan): R {
  if (plan.kind !== 'drive') return request;
  return { ...request, spec: { ...(request.spec as object), desiredPowerState: plan.power } };
}
