// Test-side helpers over the real API server: clients, namespaces, and the
// error text a user would see.
import { CoreV1Api, KubeConfig, KubernetesObjectApi, PatchStrategy, type KubernetesObject } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { startRole, type RoleProcess } from './controller-process.js';

export function testKubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(inject('kubeconfig'));
  return kc;
}

export function objectApi(kc = testKubeConfig()): KubernetesObjectApi {
  return KubernetesObjectApi.makeApiClient(kc);
}

/** A fresh namespace for one test file; deleted by the returned function. */
export async function createNamespace(prefix: string, kc = testKubeConfig()): Promise<{ name: string; remove: () => Promise<void> }> {
  const core = kc.makeApiClient(CoreV1Api);
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  await core.createNamespace({ body: { metadata: { name } } });
  return { name, remove: async () => void (await core.deleteNamespace({ name })) };
}

/** The message the API server returned for a failed call (what kubectl prints). */
export function apiMessage(err: unknown): string {
  const body = (err as { body?: unknown }).body;
  if (typeof body === 'string') {
    try {
      return String((JSON.parse(body) as { message?: string }).message ?? body);
    } catch {
      return body;
    }
  }
  return err instanceof Error ? err.message : String(err);
}

/** Server-side apply as a named field manager. */
export async function apply<T extends KubernetesObject>(obj: T, fieldManager = 'banlieue-test', kc = testKubeConfig()): Promise<T> {
  return objectApi(kc).patch<T>(obj, undefined, undefined, fieldManager, true, PatchStrategy.ServerSideApply);
}

/** A namespace of the suite's own with `banlieue controller` watching it (a local process, as `make dev-cluster` users run it). */
export interface ControllerNamespace {
  readonly ns: string;
  readonly controller: RoleProcess;
  /** Stops the controller, then removes the namespace. */
  stop(): Promise<void>;
}

export async function startControllerNamespace(prefix: string): Promise<ControllerNamespace> {
  const { name: ns, remove } = await createNamespace(prefix);
  const controller = await startRole(['controller', '--kubeconfig', inject('kubeconfig'), '--no-leader-elect', '--namespace', ns]);
  return {
    ns,
    controller,
    stop: async () => {
      await controller.stop();
      await remove();
    },
  };
}
