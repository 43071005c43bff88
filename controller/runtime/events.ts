// Kubernetes Events (events.k8s.io/v1) for what users should notice. The same
// (object, reason, message) is recorded at most once per window, so a steady
// state writes nothing. Sent in the background, as client-go's broadcaster
// does: a reconcile does not wait a round trip per Event (five per new VM
// on a provider); one that must know its Event exists first awaits record().
// A write the API server could not take (unreachable, 429, 5xx) is tried again
// a few times, as client-go's broadcaster does: a blip would otherwise lose
// the one Event that says a VM was deleted.
import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { toApiFailure } from './api-error.js';
import type { Logger } from './log.js';
import type { KubeApi } from './kube-api.js';
import { bounded, EVENT_NOTE_MAX_BYTES } from './bounded-text.js';
import { boundedName, OBJECT_NAME_MAX } from '../../infra/api/bounded-name.js';

export interface EventTarget {
  apiVersion: string;
  kind: string;
  metadata: { name?: string; namespace?: string; uid?: string };
}

const DEDUP_WINDOW_MS = 10 * 60_000;
/** The longest reportingInstance the API server takes (a pod name runs to 253 characters). */
const REPORTING_INSTANCE_MAX = 128;
/** Events waiting to be sent; beyond this the oldest are dropped (a burst the API server cannot take). */
const MAX_PENDING = 1000;
/** POSTs in flight at once. */
const SENDERS = 4;
/** Waits before each new try of an Event the API server could not take. */
const RETRY_DELAYS_MS = [1_000, 2_000, 5_000, 10_000, 20_000];

interface Pending {
  readonly namespace: string;
  readonly event: Record<string, unknown>;
  readonly sent: () => void;
}

export class EventRecorder {
  private readonly recent = new Map<string, number>();
  private readonly pending: Pending[] = [];
  private sending = 0;
  private readonly reportingInstance: string;

  constructor(
    private readonly api: KubeApi,
    private readonly reportingController: string,
    reportingInstance: string,
    private readonly log: Logger,
    private readonly retryDelaysMs: readonly number[] = RETRY_DELAYS_MS,
  ) {
    this.reportingInstance = boundedName(reportingInstance, REPORTING_INSTANCE_MAX);
  }

  /**
   * Record an event: queued at once, sent in the background; the promise
   * settles once it was sent (or given up on). Failures are logged, never
   * thrown (events are best effort).
   */
  record(target: EventTarget, type: 'Normal' | 'Warning', reason: string, note: string): Promise<void> {
    const name = target.metadata.name ?? '';
    const key = `${target.metadata.uid ?? name}|${reason}|${note}`;
    const now = Date.now();
    if ((this.recent.get(key) ?? 0) > now - DEDUP_WINDOW_MS) return Promise.resolve();
    this.recent.set(key, now);
    if (this.recent.size > 10_000) this.recent.clear();
    const namespace = target.metadata.namespace ?? 'default';
    const event = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      // The object's name may take all 253 characters an Event's name may have.
      metadata: { name: `${boundedName(name, OBJECT_NAME_MAX - 17)}.${randomBytes(8).toString('hex')}`, namespace },
      eventTime: new Date(now).toISOString().replace('Z', '000Z'),
      reportingController: this.reportingController,
      reportingInstance: this.reportingInstance,
      action: reason,
      reason,
      type,
      note: bounded(note, EVENT_NOTE_MAX_BYTES),
      regarding: {
        apiVersion: target.apiVersion,
        kind: target.kind,
        name,
        namespace: target.metadata.namespace,
        uid: target.metadata.uid,
      },
    };
    return new Promise<void>((sent) => {
      if (this.pending.length >= MAX_PENDING) {
        this.pending.shift()?.sent();
        this.log.warn({ reason }, 'Dropped an event: too many waiting to be sent');
      }
      this.pending.push({ namespace, event, sent });
      this.sendNext();
    });
  }

  private sendNext(): void {
    while (this.sending < SENDERS && this.pending.length > 0) {
      const next = this.pending.shift() as Pending;
      this.sending += 1;
      void this.send(next).finally(() => {
        this.sending -= 1;
        next.sent();
        this.sendNext();
      });
    }
  }

  private async send({ namespace, event }: Pending): Promise<void> {
    for (let attempt = 0; ; attempt += 1) {
      try {
        await this.api.request('POST', `/apis/events.k8s.io/v1/namespaces/${namespace}/events`, { body: event });
        return;
      } catch (err) {
        const wait = this.retryDelaysMs[attempt];
        if (wait === undefined || !isTransient(err)) {
          this.log.warn({ reason: event.reason, err: err instanceof Error ? err.message : String(err) }, 'Could not record event');
          return;
        }
        await delay(wait);
      }
    }
  }
}

/** An API server that could not take the write now but may later: unreachable, too busy (429), failing (5xx). */
function isTransient(err: unknown): boolean {
  const failure = toApiFailure(err);
  return failure.kind === 'Unreachable' || failure.status === 429 || (failure.status ?? 0) >= 500;
}
