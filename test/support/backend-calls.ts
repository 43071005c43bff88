// A provider role's backend calls from its Prometheus `/metrics`
// (banlieue_backend_calls_total, one sample per method and outcome), for
// tests that bound what the backend is asked at idle.
import type { RoleProcess } from './controller-process.js';

/** The provider's backend calls so far, by method (a SOAP method for vSphere). */
export async function backendCalls(provider: Pick<RoleProcess, 'metricsPort'>): Promise<Record<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${provider.metricsPort}/metrics`)).text();
  const calls: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const sample = /^banlieue_backend_calls_total\{([^}]*)\} (\S+)$/.exec(line);
    const method = sample && /method="([^"]+)"/.exec(sample[1] ?? '')?.[1];
    if (sample && method) calls[method] = (calls[method] ?? 0) + Number(sample[2]);
  }
  return calls;
}

/** Calls made between two readings, by method; methods not called are left out. */
export function callsSince(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(after).flatMap(([method, n]) => (n > (before[method] ?? 0) ? [[method, n - (before[method] ?? 0)]] : [])));
}

export const totalCalls = (counts: Record<string, number>): number => Object.values(counts).reduce((sum, n) => sum + n, 0);
