// The AbortSignal of the reconcile a backend call runs for. A backend sets it
// once around a pass (`withSignal`); its wire clients read it at each request
// (`currentSignal`), so a stopping role cuts every in-flight call short
// without threading a signal through every client method. AsyncLocalStorage
// keeps it per pass: concurrent passes sharing one session keep their own.
import { AsyncLocalStorage } from 'node:async_hooks';

const scope = new AsyncLocalStorage<AbortSignal>();

/** Runs `work` with `signal` as the current one; without a signal, as it is. */
export function withSignal<T>(signal: AbortSignal | undefined, work: () => Promise<T>): Promise<T> {
  if (!signal) return work();
  if (signal.aborted) return Promise.reject(abortError(signal));
  return scope.run(signal, work);
}

/** The signal of the pass this call belongs to, if any. */
export function currentSignal(): AbortSignal | undefined {
  return scope.getStore();
}

/** What an aborted call rejects with: the signal's reason, else an AbortError. */
export function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The operation was aborted', 'AbortError');
}
