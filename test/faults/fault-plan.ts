// What a fault run does, and when, decided up front from its seed: the kills
// (which role, the leader or the standby, after how long), when the 10
// VirtualMachines are deleted, and where the two outages fall. Pure: the
// same seed gives the same plan, so a failing run is replayed by its seed.
import type { SeededRandom } from '../support/seeded-random.js';

export type Role = 'controller' | 'provider';

export type FaultStep =
  /** kill -9 of one replica of `role`; it is started again at once (a restarted pod). */
  | { readonly kind: 'kill'; readonly role: Role; readonly target: 'leader' | 'standby'; readonly afterMs: number }
  /** Delete these VirtualMachines (while clones and kills are under way). */
  | { readonly kind: 'delete'; readonly names: readonly string[]; readonly afterMs: number }
  /** kube-apiserver stopped for `downMs`, then started on the same port and etcd. */
  | { readonly kind: 'apiserver-outage'; readonly downMs: number; readonly afterMs: number }
  /** The backend peer frozen for `downMs`, then resumed with its state. */
  | { readonly kind: 'backend-outage'; readonly downMs: number; readonly afterMs: number };

export interface FaultPlanProps {
  /** The VirtualMachines created at the start. */
  readonly names: readonly string[];
  /** How many of them are deleted. */
  readonly deletions: number;
  readonly kills: number;
  /** Each outage's length. */
  readonly outageMs: number;
  /** The wait before each step is drawn from [min, max]. */
  readonly gapMs: readonly [number, number];
  /** Of the kills, the share aimed at the leader (failovers), the rest at the standby. */
  readonly leaderShare: number;
}

/** The steps of one run, in order; each starts `afterMs` after the previous one ended. */
export function decideFaultPlan(random: SeededRandom, props: FaultPlanProps): FaultStep[] {
  if (props.kills < 4) throw new Error(`a fault plan needs at least 4 kills to place its deletion and outages among them, got ${props.kills}`);
  const gap = (): number => random.int(props.gapMs[0], props.gapMs[1]);
  // Deletions early (their clones are still running), the outages later and apart.
  const deleteAfter = random.int(1, Math.floor(props.kills / 3));
  const apiserverAfter = random.int(deleteAfter + 1, Math.floor((2 * props.kills) / 3));
  const backendAfter = random.int(apiserverAfter + 1, props.kills - 1);
  const steps: FaultStep[] = [];
  for (let kill = 1; kill <= props.kills; kill++) {
    const role: Role = random.pick(['controller', 'provider'] as const);
    const target = random.next() < props.leaderShare ? 'leader' : 'standby';
    steps.push({ kind: 'kill', role, target, afterMs: gap() });
    if (kill === deleteAfter) steps.push({ kind: 'delete', names: random.sample(props.names, props.deletions).sort(), afterMs: gap() });
    if (kill === apiserverAfter) steps.push({ kind: 'apiserver-outage', downMs: props.outageMs, afterMs: gap() });
    if (kill === backendAfter) steps.push({ kind: 'backend-outage', downMs: props.outageMs, afterMs: gap() });
  }
  return steps;
}

/** One line per step, for the run's log. */
export function describeStep(step: FaultStep): string {
  switch (step.kind) {
    case 'kill':
      return `kill -9 the ${step.role} ${step.target}`;
    case 'delete':
      return `delete ${step.names.length} VirtualMachines (${step.names.join(', ')})`;
    case 'apiserver-outage':
      return `stop kube-apiserver for ${step.downMs / 1000} s`;
    case 'backend-outage':
      return `freeze the backend peer for ${step.downMs / 1000} s`;
  }
}
