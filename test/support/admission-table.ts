// A table of objects the real kube-apiserver must refuse (with a message that
// names the field) or accept, each created in a namespace of its own suite.
import type { KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiMessage, createNamespace, objectApi } from './kube.js';

export type AdmissionObject = KubernetesObject & { spec: Record<string, unknown> };

/** `refused`: [what, object, text the refusal contains]; `accepted`: [what, object]. */
export function describeAdmission(
  title: string,
  namespacePrefix: string,
  refused: [string, AdmissionObject, string][],
  accepted: [string, AdmissionObject][],
): void {
  describe(title, () => {
    let ns: Awaited<ReturnType<typeof createNamespace>>;
    const api = objectApi();
    const inNs = (o: AdmissionObject): AdmissionObject => ({ ...o, metadata: { ...o.metadata, namespace: ns.name } });

    beforeAll(async () => {
      ns = await createNamespace(namespacePrefix);
    });
    afterAll(async () => {
      await ns.remove();
    });

    it.each(refused)('refuses %s, naming the field', async (_, obj, expected) => {
      const err = await api.create(inNs(obj), undefined, 'All').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err, 'the API server accepted it').toBeDefined();
      expect(apiMessage(err), apiMessage(err)).toContain(expected);
    });

    it.each(accepted)('accepts %s', async (_, obj) => {
      await expect(api.create(inNs(obj), undefined, 'All')).resolves.toMatchObject({ kind: obj.kind });
    });
  });
}
