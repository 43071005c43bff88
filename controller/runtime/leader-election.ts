// Leader election on a coordination.k8s.io/v1 Lease, as client-go does it:
// optimistic updates on resourceVersion, and expiry judged by when *we* last
// saw the record change (no trust in other machines' clocks). Only the leader
// runs controllers; losing the lease ends the process (a clean restart is
// simpler and safer than unwinding half-done work).
import { setMaxListeners } from 'node:events';
import type { Logger } from './log.js';
import { sleep } from './backoff.js';
import { ApiStatusError, type KubeApi } from './kube-api.js';
import type { Readiness } from './health.js';

export interface LeaderElectionOptions {
  readonly namespace: string;
  readonly name: string;
  readonly identity: string;
  /** @default 15 s */
  readonly leaseDurationMs?: number;
  /** How often the leader renews. @default 5 s */
  readonly renewMs?: number;
  /** How often a standby retries. @default 2 s */
  readonly retryMs?: number;
}

/** A coordination.k8s.io/v1 Lease, the fields leader election reads and writes. */
export interface Lease {
  apiVersion: 'coordination.k8s.io/v1';
  kind: 'Lease';
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec: {
    holderIdentity?: string | null;
    leaseDurationSeconds?: number;
    acquireTime?: string | null;
    renewTime?: string | null;
    leaseTransitions?: number;
  };
}

/** metav1.MicroTime. */
const microTime = (d: Date): string => d.toISOString().replace('Z', '000Z');

export class LeaderElector {
  private state: Readiness = 'starting';
  private observed: { record: string; at: number } | undefined;
  private readonly leaseDurationMs: number;

  constructor(
    private readonly api: KubeApi,
    private readonly options: LeaderElectionOptions,
    private readonly log: Logger,
    private readonly onChange: (leading: boolean) => void = () => undefined,
  ) {
    this.leaseDurationMs = options.leaseDurationMs ?? 15_000;
  }

  readiness(): Readiness {
    return this.state;
  }

  private ref(): Lease {
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: this.options.name, namespace: this.options.namespace },
      spec: {},
    };
  }

  /**
   * Wait until this process leads, then call `lead`; resolves when `signal`
   * aborts (after releasing the lease) and rejects when leadership is lost.
   */
  async run(signal: AbortSignal, lead: (leaderSignal: AbortSignal) => Promise<void>): Promise<void> {
    while (!signal.aborted && !(await this.tryAcquireOrRenew())) await sleep(this.options.retryMs ?? 2000, signal);
    if (signal.aborted) return;
    this.log.info({ lease: `${this.options.namespace}/${this.options.name}`, identity: this.options.identity }, 'Became leader');
    this.onChange(true);
    const leaderAbort = new AbortController();
    setMaxListeners(0, leaderAbort.signal);
    signal.addEventListener('abort', () => leaderAbort.abort(), { once: true });
    const leading = lead(leaderAbort.signal);
    let lastRenew = Date.now();
    while (!signal.aborted) {
      await sleep(this.options.renewMs ?? 5000, signal);
      if (signal.aborted) break;
      if (await this.tryAcquireOrRenew()) lastRenew = Date.now();
      else if (Date.now() - lastRenew > (this.leaseDurationMs * 2) / 3) {
        leaderAbort.abort();
        this.onChange(false);
        throw new Error(`lost the lease ${this.options.namespace}/${this.options.name}`);
      }
    }
    // Finish in-flight work before handing over, so two leaders never overlap.
    leaderAbort.abort();
    await leading;
    await this.release();
  }

  /** One election round: true when this process holds the lease afterwards. */
  private async tryAcquireOrRenew(): Promise<boolean> {
    const now = new Date();
    let current: Lease | undefined;
    try {
      current = await this.api.get<Lease>(this.ref());
    } catch (err) {
      if (!(err instanceof ApiStatusError && err.code === 404)) return this.unreachable(err);
    }
    const desired = {
      holderIdentity: this.options.identity,
      leaseDurationSeconds: Math.round(this.leaseDurationMs / 1000),
      renewTime: microTime(now),
    };
    try {
      if (!current) {
        const created = await this.api.request<Lease>('POST', await this.api.pathOf({ ...this.ref(), metadata: { ...this.ref().metadata, name: '' } }), {
          body: { ...this.ref(), spec: { ...desired, acquireTime: microTime(now), leaseTransitions: 0 } },
        });
        return this.became(created);
      }
      const record = JSON.stringify(current.spec);
      if (this.observed?.record !== record) this.observed = { record, at: Date.now() };
      const holder = current.spec.holderIdentity;
      const mine = holder === this.options.identity;
      // Judged at `now`, the time an acquisition below stamps as acquireTime
      // (as client-go does): the Lease then shows it was taken a whole lease
      // duration after the holder was last seen renewing, never earlier.
      const expired = !holder || now.getTime() - this.observed.at > (current.spec.leaseDurationSeconds ?? 15) * 1000;
      if (!mine && !expired) return this.standby();
      const updated = await this.api.request<Lease>('PUT', await this.api.pathOf(this.ref()), {
        body: {
          ...current,
          spec: {
            ...current.spec,
            ...desired,
            ...(mine ? {} : { acquireTime: microTime(now), leaseTransitions: (current.spec.leaseTransitions ?? 0) + 1 }),
          },
        },
      });
      return this.became(updated);
    } catch (err) {
      // 409: someone else won this round.
      if (err instanceof ApiStatusError && err.code === 409) return this.standby();
      // No Lease and no namespace to make it in: waiting would warn forever (a role run by hand, a typo).
      if (!current && err instanceof ApiStatusError && err.code === 404) {
        throw new Error(
          `namespace ${this.options.namespace} does not exist: the Lease ${this.options.name} cannot be made there (create it, or pass another --leader-election-namespace)`,
        );
      }
      return this.unreachable(err);
    }
  }

  private became(lease: Lease): boolean {
    this.observed = { record: JSON.stringify(lease.spec), at: Date.now() };
    this.state = 'leader';
    return true;
  }

  private standby(): boolean {
    if (this.state !== 'leader') this.state = 'standby';
    return false;
  }

  private unreachable(err: unknown): boolean {
    this.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'Lease not readable');
    if (this.state !== 'leader') this.state = 'unreachable';
    return false;
  }

  /** Hand the lease over at shutdown so a standby need not wait for expiry. */
  private async release(): Promise<void> {
    try {
      const current = await this.api.get<Lease>(this.ref());
      if (current.spec.holderIdentity !== this.options.identity) return;
      await this.api.request('PUT', await this.api.pathOf(this.ref()), {
        body: { ...current, spec: { ...current.spec, holderIdentity: null, renewTime: null, acquireTime: null } },
      });
      this.log.info('Released the lease');
    } catch (err) {
      this.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'Could not release the lease');
    } finally {
      this.onChange(false);
    }
  }
}
