// Finalizers are added and removed by targeted JSON patches, never by
// rewriting the list: other controllers (CAPI, GC) edit it concurrently. The
// `test` op makes a removal fail (409/422) instead of dropping someone else's.
import type { KubeApi, ObjectRef } from './kube-api.js';

interface WithFinalizers extends ObjectRef {
  metadata: ObjectRef['metadata'] & { finalizers?: string[] };
}

export function hasFinalizer(obj: WithFinalizers, finalizer: string): boolean {
  return obj.metadata.finalizers?.includes(finalizer) ?? false;
}

export async function ensureFinalizer(api: KubeApi, obj: WithFinalizers, finalizer: string): Promise<void> {
  if (hasFinalizer(obj, finalizer)) return;
  const patch = obj.metadata.finalizers
    ? [{ op: 'add', path: '/metadata/finalizers/-', value: finalizer }]
    : [{ op: 'add', path: '/metadata/finalizers', value: [finalizer] }];
  await api.request('PATCH', await api.pathOf(obj), { body: patch, contentType: 'application/json-patch+json' });
}

export async function removeFinalizer(api: KubeApi, obj: WithFinalizers, finalizer: string): Promise<void> {
  const index = obj.metadata.finalizers?.indexOf(finalizer) ?? -1;
  if (index < 0) return;
  const path = `/metadata/finalizers/${index}`;
  await api.request('PATCH', await api.pathOf(obj), {
    body: [
      { op: 'test', path, value: finalizer },
      { op: 'remove', path },
    ],
    contentType: 'application/json-patch+json',
  });
}
