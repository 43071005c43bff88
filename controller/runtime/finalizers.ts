// Finalizers are added and removed by targeted JSON patches, never by
// rewriting the list: other controllers (CAPI, GC) edit it concurrently.
// Every patch carries a `test` precondition on what it changes, so a patch
// built from a stale copy fails (422) instead of replacing or dropping someone
// else's entry, while a write elsewhere in the object (CAPI's owner reference,
// a status) does not fail it:
// - add tests the list as our copy has it (null where it has none: the API
//   server's JSON patch takes null as "absent"), and a stamped field absent;
// - remove tests the value at the index it removes (a removal elsewhere in the
//   list changes the index, not the entry we hold).
// A failed precondition reads the object afresh and tries again.
import { TransientError } from './errors.js';
import type { WrittenPart } from './expectations.js';
import { ApiStatusError, type KubeApi, type ObjectRef } from './kube-api.js';

interface WithFinalizers extends ObjectRef {
  metadata: ObjectRef['metadata'] & { finalizers?: string[] };
}

type JsonPatchOp = { op: 'test' | 'add'; path: string; value: unknown } | { op: 'remove'; path: string };

/** Attempts per call; each failed precondition costs one GET and one PATCH. */
const MAX_ATTEMPTS = 5;

export function hasFinalizer(obj: WithFinalizers, finalizer: string): boolean {
  return obj.metadata.finalizers?.includes(finalizer) ?? false;
}

/**
 * A field written in the same patch as the finalizer, where the object has no
 * value for it yet (e.g. an InfraMachine's spec.providerID, which must exist
 * before anything is created on a backend): one write and one event instead
 * of two. `path` names a field of an object that exists (`['spec', 'providerID']`).
 */
export interface FieldStamp {
  readonly path: readonly [string, ...string[]];
  readonly value: unknown;
}

/**
 * Add `finalizer` to `obj` unless it is there, and `stamp` where the object has no value for it
 * yet (its only writer: a field that must exist before anything else is done). Resolves true when
 * this call changed the object (a reconciler returns and runs again on the event), false when both
 * were there already.
 */
export async function ensureFinalizer(api: KubeApi, obj: WithFinalizers, finalizer: string, stamp?: FieldStamp): Promise<boolean> {
  const unstamped = (o: WithFinalizers): boolean => stamp !== undefined && valueAt(o, stamp.path) === undefined;
  if (hasFinalizer(obj, finalizer) && !unstamped(obj)) return false;
  return patchWithRetry(api, obj, finalizer, 'adding', (current) => {
    const adds = !hasFinalizer(current, finalizer);
    const stamps = unstamped(current);
    if (!adds && !stamps) return undefined;
    const list = current.metadata.finalizers;
    const finalizerOps: JsonPatchOp[] = !adds
      ? []
      : [
          { op: 'test', path: '/metadata/finalizers', value: list ?? null },
          list ? { op: 'add', path: '/metadata/finalizers/-', value: finalizer } : { op: 'add', path: '/metadata/finalizers', value: [finalizer] },
        ];
    const stampOps: JsonPatchOp[] =
      stamp && stamps
        ? [
            { op: 'test', path: pointer(stamp.path), value: null },
            { op: 'add', path: pointer(stamp.path), value: stamp.value },
          ]
        : [];
    return [...finalizerOps, ...stampOps];
  });
}

/** What one ensureFinalizer call wrote: its finalizer, and its stamp if it had one. */
export interface FinalizerWrite {
  readonly stamp?: FieldStamp;
}

/** Where ensureFinalizer writes `finalizer` (and a stamp): for Expectations of its writes. */
export function finalizerPart(finalizer: string): WrittenPart<WithFinalizers & { metadata: { uid?: string } }, FinalizerWrite> {
  return {
    shows: (object, { stamp }) => hasFinalizer(object, finalizer) && (stamp === undefined || valueAt(object, stamp.path) !== undefined),
    overlay: (object, { stamp }) => {
      const finalizers = hasFinalizer(object, finalizer) ? object.metadata.finalizers : [...(object.metadata.finalizers ?? []), finalizer];
      const added = { ...object, metadata: { ...object.metadata, finalizers } };
      return stamp ? withValueAt(added, stamp.path, stamp.value) : added;
    },
  };
}

function withValueAt<T>(obj: T, [key, ...rest]: readonly string[], value: unknown): T {
  if (key === undefined) return value as T;
  const at = (obj ?? {}) as Record<string, unknown>;
  return { ...at, [key]: withValueAt(at[key], rest, value) } as T;
}

function valueAt(obj: unknown, path: readonly string[]): unknown {
  return path.reduce<unknown>((at, key) => (at !== null && typeof at === 'object' ? (at as Record<string, unknown>)[key] : undefined), obj);
}

/** RFC 6901: `~` and `/` escaped. */
const pointer = (path: readonly string[]): string => path.map((key) => `/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');

/** Remove `finalizer` from `obj`; a gone object has nothing left to remove. */
export async function removeFinalizer(api: KubeApi, obj: WithFinalizers, finalizer: string): Promise<void> {
  if (!hasFinalizer(obj, finalizer)) return;
  try {
    await patchWithRetry(api, obj, finalizer, 'removing', (current) => {
      const index = current.metadata.finalizers?.indexOf(finalizer) ?? -1;
      if (index < 0) return undefined;
      const path = `/metadata/finalizers/${index}`;
      return [
        { op: 'test', path, value: finalizer },
        { op: 'remove', path },
      ];
    });
  } catch (err) {
    if (!(err instanceof ApiStatusError && err.code === 404)) throw err;
  }
}

/**
 * Send the patch `build` makes from the object, re-reading it after a failed
 * precondition. `build` returns undefined when nothing is to be done.
 */
async function patchWithRetry(
  api: KubeApi,
  obj: WithFinalizers,
  finalizer: string,
  verb: string,
  build: (current: WithFinalizers) => JsonPatchOp[] | undefined,
): Promise<boolean> {
  const path = await api.pathOf(obj);
  let patch = build(obj);
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    if (patch === undefined) return false;
    let failure: ApiStatusError;
    try {
      await api.request('PATCH', path, { body: patch, contentType: 'application/json-patch+json' });
      return true;
    } catch (err) {
      if (!(err instanceof ApiStatusError && (err.code === 422 || err.code === 409))) throw err;
      failure = err;
    }
    const next = build(await api.request<WithFinalizers>('GET', path));
    // The same patch again means our precondition held and the server refused
    // for another reason (422 on a finalizer added during deletion): no retry.
    if (JSON.stringify(next) === JSON.stringify(patch)) throw failure;
    patch = next;
  }
  const { namespace, name } = obj.metadata;
  throw new TransientError(
    `${verb} finalizer ${finalizer} on ${obj.kind} ${namespace ? `${namespace}/` : ''}${name ?? ''}: the object kept changing (${MAX_ATTEMPTS} attempts)`,
  );
}
