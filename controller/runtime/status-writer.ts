// The one status writer: server-side apply of the fields this manager owns,
// skipped when the live object already says the same (idle means zero writes).
import type { ObjectMeta } from '../../infra/api/kind.js';
import { ApiStatusError } from './kube-api.js';
import type { ServerSideApply } from './server-side-apply.js';

/** Whether every field of `desired` has the same value in `current` (arrays: same length, elementwise). */
export function containsAll(current: unknown, desired: unknown): boolean {
  if (desired === undefined) return true;
  if (Array.isArray(desired)) {
    return Array.isArray(current) && current.length === desired.length && desired.every((d, i) => containsAll(current[i], d));
  }
  if (desired !== null && typeof desired === 'object') {
    if (current === null || typeof current !== 'object') return false;
    return Object.entries(desired).every(([k, v]) => containsAll((current as Record<string, unknown>)[k], v));
  }
  return current === desired;
}

export interface StatusTarget {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  status?: unknown;
}

/** Apply `status` to the status subresource of `obj` unless it is already there. Returns whether it wrote. */
export async function applyStatus(ssa: ServerSideApply, obj: StatusTarget, status: Record<string, unknown>): Promise<boolean> {
  if (containsAll(obj.status, status)) return false;
  await ssa.apply(
    {
      apiVersion: obj.apiVersion,
      kind: obj.kind,
      metadata: { name: obj.metadata.name ?? '', ...(obj.metadata.namespace ? { namespace: obj.metadata.namespace } : {}) },
      status,
    },
    { subresource: 'status' },
  );
  return true;
}

/** What applyStatusOrRefusal wrote: the status decided, or (`refusal`, the API server's words) the one saying it was refused. */
export interface StatusApplied<S> {
  readonly written: boolean;
  readonly status: S;
  readonly refusal?: string;
}

/**
 * applyStatus; when the API server refuses `status` as invalid (422: a value
 * its schema does not take), applies `refused(itsWords)` instead, so the
 * object says why (Reason.StatusRefused) rather than the same refused write
 * being retried without a word to the user.
 */
export async function applyStatusOrRefusal<S extends object>(
  ssa: ServerSideApply,
  obj: StatusTarget,
  status: S,
  refused: (message: string) => S,
): Promise<StatusApplied<S>> {
  try {
    return { written: await applyStatus(ssa, obj, status as Record<string, unknown>), status };
  } catch (err) {
    if (!(err instanceof ApiStatusError && err.code === 422)) throw err;
    const instead = refused(err.serverMessage);
    return { written: await applyStatus(ssa, obj, instead as Record<string, unknown>), status: instead, refusal: err.serverMessage };
  }
}
