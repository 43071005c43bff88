// Reconcile passes driven one at a time against a real API server, each with
// the writes it made: a reconciler built in the test's process on real
// informers, writing through a CountingKubeApi, run by calling reconcile()
// as its controller's worker would. Before each pass the informer caches are
// made to show everything the API server holds (the previous pass's writes,
// the test's own), since reconcilers decide from their caches.
//
// A table of cases per reconciler (`statusWriteTable`) checks that each pass
// writes status at most once. A status write counts when the API server takes
// it (2xx). One it refuses (422: a value its schema does not take) changes
// nothing; a reconciler that meets one writes instead the status saying so
// (applyStatusOrRefusal), so the one shape a refusal may take in a pass is
// that 422 followed by at most one taken write. A case ends with a pass the
// API server takes no write from; that idle pass sends no write at all,
// unless the case's refused write is retried by design (`retriesRefused`).
import { expect, it } from 'vitest';
import { EventRecorder } from '../../controller/runtime/events.js';
import { Informer, keyOf, type KubeObject } from '../../controller/runtime/informer.js';
import type { KubeApi } from '../../controller/runtime/kube-api.js';
import { silentLogger } from '../../controller/runtime/log.js';
import type { Reconciler } from '../../controller/runtime/controller.js';
import type { ReconcileResult } from '../../controller/runtime/errors.js';
import { apiVersionOf, type KindDefinition } from '../../infra/api/kind.js';
import { statusWrites, type ApiWrite, type CountingKubeApi } from './counting-kube-api.js';
import { waitFor } from './wait.js';

/**
 * The role's EventRecorder, whose background sends a test can wait for: a pass's
 * Events are then counted with the pass that recorded them, never with the next.
 */
export class SettledEventRecorder extends EventRecorder {
  private readonly unsent = new Set<Promise<void>>();

  override record(...args: Parameters<EventRecorder['record']>): Promise<void> {
    const sent = super.record(...args);
    this.unsent.add(sent);
    void sent.finally(() => this.unsent.delete(sent));
    return sent;
  }

  /** Resolves once every Event recorded so far was sent (or given up on). */
  async settled(): Promise<void> {
    while (this.unsent.size > 0) await Promise.all([...this.unsent]);
  }
}

interface Watched {
  readonly informer: Informer<KubeObject>;
  readonly kind: Pick<KindDefinition, 'group' | 'version' | 'kind' | 'scope'>;
  readonly namespace: string | undefined;
}

/** Informers of one case: namespaced kinds watched in the case's namespace only, cluster-scoped ones in full. */
export class CaseCaches {
  private readonly watched: Watched[] = [];
  private readonly stop = new AbortController();

  /** @param api a client that does not count: the informers only read. */
  constructor(
    private readonly api: KubeApi,
    private readonly namespace: string,
  ) {}

  watch<T extends KubeObject>(kind: Pick<KindDefinition, 'group' | 'version' | 'kind' | 'scope'>): Informer<T> {
    const namespace = kind.scope === 'Namespaced' ? this.namespace : undefined;
    const informer = new Informer<T>(this.api, { apiVersion: apiVersionOf(kind), kind: kind.kind, log: silentLogger(), ...(namespace ? { namespace } : {}) });
    this.watched.push({ informer: informer as unknown as Informer<KubeObject>, kind, namespace });
    return informer;
  }

  async start(): Promise<void> {
    for (const { informer } of this.watched) void informer.run(this.stop.signal);
    await Promise.all(this.watched.map(({ informer }) => informer.waitForSync({ timeoutMs: 30_000 })));
  }

  /** Waits until every cache holds what the API server lists, object by object and resourceVersion by resourceVersion. */
  async caughtUp(): Promise<void> {
    await waitFor('the informer caches to show what the API server holds', async () => {
      for (const { informer, kind, namespace } of this.watched) {
        const path = await this.api.pathOf({ apiVersion: apiVersionOf(kind), kind: kind.kind, metadata: { name: '', ...(namespace ? { namespace } : {}) } });
        const listed = await this.api.request<{ items: KubeObject[] }>('GET', path);
        const cached = informer.list(namespace);
        if (listed.items.length !== cached.length) return false;
        if (!listed.items.every((o) => informer.get(keyOf(o))?.metadata.resourceVersion === o.metadata.resourceVersion)) return false;
      }
      return true;
    });
  }

  close(): void {
    this.stop.abort();
  }
}

/** One reconcile pass and what it wrote. */
export interface Pass {
  readonly writes: readonly ApiWrite[];
  readonly result?: ReconcileResult;
  /** What reconcile() threw (a pass that writes its status, then has the queue retry). */
  readonly error?: unknown;
}

/** The accepted status writes of a pass. */
export const statusWritten = (pass: Pass): number => statusWrites(pass.writes).filter((w) => w.accepted).length;

/** Drives passes of one reconciler over one key, keeping every pass it ran. */
export class PassDriver {
  readonly passes: Pass[] = [];

  constructor(
    private readonly reconciler: Reconciler,
    private readonly api: CountingKubeApi,
    private readonly events: SettledEventRecorder | undefined,
    private readonly caches: CaseCaches,
  ) {}

  /** One pass over `key`, once the caches show the API server's state. */
  async pass(key: string): Promise<Pass> {
    await this.caches.caughtUp();
    this.api.take();
    let ran: Pick<Pass, 'result' | 'error'>;
    try {
      ran = { result: await this.reconciler.reconcile(key, silentLogger(), new AbortController().signal) };
    } catch (error) {
      ran = { error };
    }
    await this.events?.settled();
    const pass = { writes: this.api.take(), ...ran };
    this.passes.push(pass);
    return pass;
  }

  /**
   * Passes over `key` until one has the API server take no write (that pass included): the
   * reconciler has nothing left to change. Fails after `max` passes.
   */
  async untilIdle(key: string, max = 8): Promise<Pass[]> {
    const ran: Pass[] = [];
    while (ran.length < max) {
      const pass = await this.pass(key);
      ran.push(pass);
      if (!pass.writes.some((w) => w.accepted)) return ran;
    }
    throw new Error(`${this.reconciler.name} ${key} still wrote after ${max} passes:\n${describePasses(ran)}`);
  }
}

/** Passes as lines of `METHOD path answer`, for failure messages. */
export function describePasses(passes: readonly Pass[]): string {
  return passes
    .map((p, i) => {
      const writes = p.writes.map((w) => `    ${w.method} ${w.path} ${w.accepted ? 'ok' : `refused ${w.code ?? 'without answer'}`}`);
      const ending = p.error !== undefined ? ` (threw: ${p.error instanceof Error ? p.error.message : String(p.error)})` : '';
      return [`  pass ${i + 1}: ${statusWritten(p)} status write(s)${ending}`, ...writes].join('\n');
    })
    .join('\n');
}

/** One case's namespace and the driver of its reconciler's passes. */
export interface World {
  readonly ns: string;
  readonly driver: PassDriver;
  close(): void;
}

/** One row of a reconciler's table. */
export interface Case<W extends World> {
  readonly name: string;
  /** The objects the case starts from, and any passes that bring them there; the key to reconcile. */
  readonly given: (w: W) => Promise<string>;
  /** A change after `given`, before the passes counted to idle. */
  readonly when?: (w: W, key: string) => Promise<void>;
  /** The idle pass sends again a write the API server refuses, as the reconciler retries it by design. */
  readonly retriesRefused?: boolean;
  /** What the case reached (so that it covers what its name says); `counted`: the passes after `when`, the idle one last. */
  readonly then: (w: W, key: string, counted: readonly Pass[]) => Promise<void> | void;
}

/**
 * At most one status write the API server took; a refused one only as applyStatusOrRefusal
 * sends it: the 422 first, then at most the write saying so.
 */
function expectOneStatusWriteAtMost(pass: Pass, story: string): void {
  const status = statusWrites(pass.writes);
  expect(statusWritten(pass), story).toBeLessThanOrEqual(1);
  const refused = status.filter((w) => !w.accepted);
  expect(refused.length, story).toBeLessThanOrEqual(1);
  if (refused.length === 1) expect(status[0], story).toMatchObject({ accepted: false, code: 422 });
}

/** Runs one case; the world is closed after it, whatever happened. */
async function check<W extends World>(w: W, c: Case<W>): Promise<void> {
  try {
    const key = await c.given(w);
    await c.when?.(w, key);
    const counted = await w.driver.untilIdle(key);
    const story = `${w.driver.passes.length} passes over ${key}:\n${describePasses(w.driver.passes)}`;
    for (const pass of w.driver.passes) expectOneStatusWriteAtMost(pass, story);
    const idle = counted[counted.length - 1] as Pass;
    if (c.retriesRefused)
      expect(
        idle.writes.filter((w) => w.accepted),
        story,
      ).toEqual([]);
    else expect(idle.writes, story).toEqual([]);
    await c.then(w, key, counted);
  } finally {
    w.close();
  }
}

/** One `it` per case, each in a world `openWorld` makes for it. */
export function statusWriteTable<W extends World>(openWorld: () => Promise<W>, cases: readonly Case<W>[]): void {
  for (const c of cases) it(c.name, async () => check(await openWorld(), c));
}
