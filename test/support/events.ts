// The Events a test reads about one object. A reconciler records its Events
// after the status write a test waits for, not with it, so a test reads them
// once they hold what it expects (or as they are at a deadline, so that its
// expect shows what is missing), never once right after a status change.
import { setTimeout as delay } from 'node:timers/promises';
import type { KubeApi } from '../../controller/runtime/kube-api.js';

export interface EventSeen {
  readonly type: string;
  readonly reason: string;
  readonly note: string;
  readonly regarding?: { readonly kind?: string; readonly name?: string };
}

/** The events.k8s.io Events in `ns` regarding an object named `name`. */
export async function eventsRegarding(api: KubeApi, ns: string, name: string): Promise<EventSeen[]> {
  const list = await api.request<{ items: EventSeen[] }>('GET', `/apis/events.k8s.io/v1/namespaces/${ns}/events`);
  return list.items.filter((e) => e.regarding?.name === name);
}

/** The Events regarding `name` once every reason in `reasons` is among them, or as they are after `timeoutMs`. */
export async function eventsWith(api: KubeApi, ns: string, name: string, reasons: readonly string[], timeoutMs = 60_000): Promise<EventSeen[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const seen = await eventsRegarding(api, ns, name);
    if (reasons.every((r) => seen.some((e) => e.reason === r)) || Date.now() > deadline) return seen;
    await delay(500);
  }
}

/** The Events regarding `name` once one of them matches `wanted`, or as they are after `timeoutMs`. */
export async function eventsWhere(api: KubeApi, ns: string, name: string, wanted: (e: EventSeen) => boolean, timeoutMs = 60_000): Promise<EventSeen[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const seen = await eventsRegarding(api, ns, name);
    if (seen.some(wanted) || Date.now() > deadline) return seen;
    await delay(500);
  }
}
