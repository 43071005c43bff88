// Waiting with a deadline, never sleeping blindly (STYLE §2 Tests).

/** Thrown by a probe when what it waits for can no longer come (the process it waits on exited): no more retries. */
export class StopWaiting extends Error {}

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      if (err instanceof StopWaiting) throw err;
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs / 1000}s waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
