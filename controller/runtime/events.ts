// Kubernetes Events (events.k8s.io/v1) for what users should notice. The same
// (object, reason, message) is recorded at most once per window, so a steady
// state writes nothing.
import { randomBytes } from 'node:crypto';
import type { Logger } from './log.js';
import type { KubeApi } from './kube-api.js';

export interface EventTarget {
  apiVersion: string;
  kind: string;
  metadata: { name?: string; namespace?: string; uid?: string };
}

const DEDUP_WINDOW_MS = 10 * 60_000;

export class EventRecorder {
  private readonly recent = new Map<string, number>();

  constructor(
    private readonly api: KubeApi,
    private readonly reportingController: string,
    private readonly reportingInstance: string,
    private readonly log: Logger,
  ) {}

  /** Record an event; failures are logged, never thrown (events are best effort). */
  async record(target: EventTarget, type: 'Normal' | 'Warning', reason: string, note: string): Promise<void> {
    const name = target.metadata.name ?? '';
    const key = `${target.metadata.uid ?? name}|${reason}|${note}`;
    const now = Date.now();
    if ((this.recent.get(key) ?? 0) > now - DEDUP_WINDOW_MS) return;
    this.recent.set(key, now);
    if (this.recent.size > 10_000) this.recent.clear();
    const namespace = target.metadata.namespace ?? 'default';
    const event = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: `${name}.${randomBytes(8).toString('hex')}`, namespace },
      eventTime: new Date(now).toISOString().replace('Z', '000Z'),
      reportingController: this.reportingController,
      reportingInstance: this.reportingInstance,
      action: reason,
      reason,
      type,
      note: note.slice(0, 1024),
      regarding: {
        apiVersion: target.apiVersion,
        kind: target.kind,
        name,
        namespace: target.metadata.namespace,
        uid: target.metadata.uid,
      },
    };
    try {
      await this.api.request('POST', `/apis/events.k8s.io/v1/namespaces/${namespace}/events`, { body: event });
    } catch (err) {
      this.log.warn({ reason, err: err instanceof Error ? err.message : String(err) }, 'Could not record event');
    }
  }
}
