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

/** Runs `work` outside any pass: what it starts is shared by several passes and ends on its own terms. */
export function withoutSignal<T>(work: () => T): T {
  return scope.exit(work);
}

/** `promise`, or a rejection as soon as `signal` aborts (the work behind `promise` goes on for its other waiters). */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(abortError(signal));
  return new Promise<T>((resolve, reject) => {
    const abort = (): void => reject(abortError(signal));
    signal.addEventListener('abort', abort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', abort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', abort);
        reject(err);
      },
    );
  });
}
