// What the informer keeps of an object it lists or watches: the object less the
// fields no role reads, which are often most of its bytes. managedFields (the
// field owners of every writer, ~1.7 KiB on a VirtualMachine and its machine)
// and kubectl's last-applied annotation (a second copy of what `kubectl apply`
// sent) are read only from a fresh GET by the SSA helper (server-side-apply.ts),
// never from a cache, and nothing writes a cached object back whole.
import type { ObjectMeta } from '../../infra/api/kind.js';

/** The annotation `kubectl apply` (client-side) keeps its last request in. */
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/** `obj`, trimmed in place for the cache, and returned. */
export function toCached<T extends { metadata: ObjectMeta }>(obj: T): T {
  const meta = obj.metadata as { managedFields?: unknown };
  delete meta.managedFields;
  const annotations = obj.metadata.annotations;
  if (annotations && LAST_APPLIED_ANNOTATION in annotations) {
    delete annotations[LAST_APPLIED_ANNOTATION];
    // As the API server shows an object without annotations.
    if (Object.keys(annotations).length === 0) delete obj.metadata.annotations;
  }
  return obj;
}
