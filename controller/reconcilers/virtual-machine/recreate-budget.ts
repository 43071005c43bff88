// How many VirtualMachines of one namespace the controller may start
// recreating per minute (drift.ts): a sliding window per namespace, in the
// leader's memory. A failover starts with a full budget, which allows at most
// one more window's worth: the bound holds per leader, and a recreate is
// announced on the VM (PlacementValid=False Recreating) before it is done.
import type { RecreateBudget } from './drift.js';

const WINDOW_MS = 60_000;

/** Recreates per namespace per minute unless the controller is told otherwise (--max-recreates-per-minute). */
export const DEFAULT_RECREATES_PER_MINUTE = 5;

export class RecreateBudgets {
  private readonly started = new Map<string, number[]>();

  /** `limit` recreates per namespace per minute; 0 allows none. */
  constructor(private readonly limit: number) {}

  /** What `namespace` may still do at `now`. */
  budget(namespace: string, now: Date): RecreateBudget {
    const recent = this.recent(namespace, now);
    if (recent.length < this.limit) return { limit: this.limit, available: true };
    const oldest = recent[recent.length - this.limit] ?? now.getTime();
    return { limit: this.limit, available: false, nextAt: new Date(oldest + WINDOW_MS) };
  }

  /** One recreate of `namespace` started at `now`. */
  take(namespace: string, now: Date): void {
    this.started.set(namespace, [...this.recent(namespace, now), now.getTime()]);
  }

  private recent(namespace: string, now: Date): number[] {
    const since = now.getTime() - WINDOW_MS;
    const recent = (this.started.get(namespace) ?? []).filter((at) => at > since);
    if (recent.length === 0) this.started.delete(namespace);
    return recent;
  }
}
