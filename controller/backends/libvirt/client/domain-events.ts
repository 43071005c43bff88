// Domain lifecycle events (defined, started, stopped, undefined…). One
// callback is registered on the daemon (CONNECT_DOMAIN_EVENT_CALLBACK_
// REGISTER_ANY) while anyone listens; the daemon then sends
// DOMAIN_EVENT_CALLBACK_LIFECYCLE messages. A lost connection loses its
// registration: while listeners remain, the connection is dialled again with
// backoff and the callback registered anew. Events of the outage are lost;
// `onDisconnect` of the client tells a listener to re-read what it watches.
import type { BackendError } from '../../backend-error.js';
import { DomainEventId } from './constants.js';
import { toDomain, type Domain } from './handles.js';
import { Events, Procedures } from './procedures.js';
import type { RpcConnection } from './rpc-connection.js';
import { XdrReader } from './xdr.js';

export interface DomainLifecycleEvent {
  readonly domain: Domain;
  /** virDomainEventType: see `LifecycleEvent` in constants.ts. */
  readonly event: number;
  /** The event's detail (e.g. for Stopped: 0 shutdown, 1 destroyed, 2 crashed…). */
  readonly detail: number;
}

export type LifecycleListener = (event: DomainLifecycleEvent) => void;

/** What DomainEvents needs of the client. */
export interface EventSource {
  connection(): Promise<RpcConnection>;
  onDisconnect(listener: (error: BackendError) => void): () => void;
}

const RETRY_FIRST_MS = 1000;
const RETRY_MAX_MS = 30_000;

export class DomainEvents {
  private readonly listeners = new Set<LifecycleListener>();
  /** The daemon's id of our callback on the current connection. */
  private callbackId: number | undefined;
  private stopWatching: (() => void) | undefined;
  private retry: NodeJS.Timeout | undefined;
  private retryMs = RETRY_FIRST_MS;
  private registering: Promise<void> | undefined;

  constructor(private readonly source: EventSource) {}

  /**
   * Calls `listener` for every lifecycle event of every domain. Resolves once
   * the daemon sends them, to a function that stops listening.
   */
  async onLifecycle(listener: LifecycleListener): Promise<() => Promise<void>> {
    this.listeners.add(listener);
    const unsubscribe = async (): Promise<void> => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) await this.deregister();
    };
    try {
      this.stopWatching ??= this.source.onDisconnect(() => this.lost());
      const connection = await this.source.connection();
      await this.register(connection);
    } catch (error) {
      await unsubscribe().catch(() => undefined);
      throw error;
    }
    return unsubscribe;
  }

  /**
   * The events as an async iterator, until `signal` aborts or the loop breaks.
   * Resolves once the daemon sends them (nothing after that is missed).
   */
  async lifecycle(signal?: AbortSignal): Promise<AsyncGenerator<DomainLifecycleEvent>> {
    const queue: DomainLifecycleEvent[] = [];
    let wake: (() => void) | undefined;
    const unsubscribe = await this.onLifecycle((event) => {
      queue.push(event);
      wake?.();
    });
    return (async function* iterate(): AsyncGenerator<DomainLifecycleEvent> {
      const onAbort = (): void => wake?.();
      signal?.addEventListener('abort', onAbort);
      try {
        while (!signal?.aborted) {
          const next = queue.shift();
          if (next) yield next;
          else await new Promise<void>((resolve) => (wake = resolve));
        }
      } finally {
        signal?.removeEventListener('abort', onAbort);
        await unsubscribe();
      }
    })();
  }

  /** A MESSAGE from the daemon (RpcConnection routes every one here). */
  dispatch(procedure: number, payload: Buffer): void {
    if (procedure !== Events.domainEventCallbackLifecycle.number) return;
    const { callbackID, msg } = Events.domainEventCallbackLifecycle.msg.decode(new XdrReader(payload));
    if (callbackID !== this.callbackId) return;
    const event = { domain: toDomain(msg.dom), event: msg.event, detail: msg.detail };
    for (const listener of this.listeners) listener(event);
  }

  /** A new connection: register again if anyone listens. */
  async restore(connection: RpcConnection): Promise<void> {
    this.callbackId = undefined;
    if (this.listeners.size > 0) await this.register(connection);
  }

  /** The client closes: no more retries. */
  stop(): void {
    clearTimeout(this.retry);
    this.stopWatching?.();
    this.stopWatching = undefined;
    this.listeners.clear();
  }

  /** Registers our callback on `connection` unless it is (or is being) registered; concurrent listeners share one. */
  private register(connection: RpcConnection): Promise<void> {
    if (this.callbackId !== undefined) return Promise.resolve();
    this.registering ??= connection
      .call(Procedures.connectDomainEventCallbackRegisterAny, { eventID: DomainEventId.Lifecycle, dom: undefined })
      .then(({ callbackID }) => {
        this.callbackId = callbackID;
        this.retryMs = RETRY_FIRST_MS;
      })
      .finally(() => {
        this.registering = undefined;
      });
    return this.registering;
  }

  private async deregister(): Promise<void> {
    this.stopWatching?.();
    this.stopWatching = undefined;
    clearTimeout(this.retry);
    const callbackID = this.callbackId;
    this.callbackId = undefined;
    if (callbackID === undefined) return;
    const connection = await this.source.connection().catch(() => undefined);
    // A connection lost since has taken the registration with it.
    await connection?.call(Procedures.connectDomainEventCallbackDeregisterAny, { callbackID }).catch(() => undefined);
  }

  private lost(): void {
    this.callbackId = undefined;
    if (this.listeners.size === 0 || this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      // connection() dials and the client calls restore(), which registers.
      this.source.connection().catch(() => {
        this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
        this.lost();
      });
    }, this.retryMs);
    this.retry.unref();
  }
}
