import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';

/** The kubeconfig from --kubeconfig, else KUBECONFIG / ~/.kube/config, else in-cluster; at `context` (--context) when given. */
export function loadKubeConfig(path?: string, context?: string): KubeConfig {
  const kc = new KubeConfig();
  const source = path ?? process.env.KUBECONFIG ?? 'the default kubeconfig';
  // With none of them, client-node falls back to http://localhost:8080, whose refusal names TLS, not the missing file.
  if (!path && !process.env.KUBECONFIG && !process.env.KUBERNETES_SERVICE_HOST && !existsSync(join(homedir(), '.kube', 'config'))) {
    throw new Error('no kubeconfig: pass --kubeconfig FILE, set KUBECONFIG, or write ~/.kube/config (in a pod, its ServiceAccount is used)');
  }
  try {
    if (path) kc.loadFromFile(path);
    else kc.loadFromDefault();
  } catch (err) {
    throw new Error(`cannot load kubeconfig ${source}: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (context !== undefined) {
    if (!kc.getContextObject(context)) {
      throw new Error(
        `kubeconfig ${source} has no context "${context}" (contexts: ${
          kc
            .getContexts()
            .map((c) => c.name)
            .join(', ') || 'none'
        })`,
      );
    }
    kc.setCurrentContext(context);
  }
  if (!kc.getCurrentCluster()) throw new Error(`kubeconfig ${source} has no current context with a cluster`);
  return kc;
}

/** The namespace of the current context, as kubectl takes it when none is named: `default` when it names none. */
export function namespaceOf(kc: KubeConfig): string {
  return kc.getContextObject(kc.getCurrentContext())?.namespace || 'default';
}

/** The API server URL of the current context, for messages. */
export function serverOf(kc: KubeConfig): string {
  return kc.getCurrentCluster()?.server ?? '(no current cluster)';
}
