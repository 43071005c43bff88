import { KubeConfig } from '@kubernetes/client-node';

/** The kubeconfig from --kubeconfig, else KUBECONFIG / ~/.kube/config, else in-cluster. */
export function loadKubeConfig(path?: string): KubeConfig {
  const kc = new KubeConfig();
  const source = path ?? process.env.KUBECONFIG ?? 'the default kubeconfig';
  try {
    if (path) kc.loadFromFile(path);
    else kc.loadFromDefault();
  } catch (err) {
    throw new Error(`cannot load kubeconfig ${source}: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!kc.getCurrentCluster()) throw new Error(`kubeconfig ${source} has no current context with a cluster`);
  return kc;
}

/** The API server URL of the current context, for messages. */
export function serverOf(kc: KubeConfig): string {
  return kc.getCurrentCluster()?.server ?? '(no current cluster)';
}
