// `banlieue version`: this client's version, the version installed in the
// cluster (the tag of the controller Deployment's image, `v<version>` as a
// release tags it) and whether they skew.
// The cluster part is best effort: without a cluster, the client's still prints.
import { CONTROLLER_NAME } from '../../infra/install/banlieue-install.js';
import { BUILD_COMMIT, RELEASE_TAG } from '../../infra/version.js';
import { KubeApi } from '../runtime/kube-api.js';
import { loadKubeConfig, serverOf } from '../runtime/kube-config.js';

export interface VersionOptions {
  readonly kubeconfig?: string;
  readonly context?: string;
  readonly namespace: string;
}

interface Deployment {
  readonly spec?: { readonly template?: { readonly spec?: { readonly containers?: readonly { readonly image?: string }[] } } };
}

/** The lines `banlieue version` prints. */
export async function versionLines(options: VersionOptions): Promise<string[]> {
  const client = `client: ${RELEASE_TAG}${BUILD_COMMIT ? ` (commit ${BUILD_COMMIT})` : ''}`;
  const installed = await installedVersion(options);
  if (!installed.ok) return [client, `installed: unknown (${installed.why})`];
  const lines = [client, `installed: ${installed.version} (${installed.server}, Deployment ${options.namespace}/${CONTROLLER_NAME})`];
  if (installed.version !== RELEASE_TAG) lines.push(`skew: this client is ${RELEASE_TAG}, the cluster runs ${installed.version}`);
  return lines;
}

async function installedVersion(options: VersionOptions): Promise<{ ok: true; version: string; server: string } | { ok: false; why: string }> {
  try {
    const kc = loadKubeConfig(options.kubeconfig, options.context);
    const deployment = await new KubeApi(kc).get<Deployment>({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: CONTROLLER_NAME, namespace: options.namespace },
    });
    const image = deployment.spec?.template?.spec?.containers?.[0]?.image ?? '';
    // <registry>/banlieue:<tag>[@sha256:…]: the tag is the version.
    const tag = /:([^:/@]+)(@|$)/.exec(image)?.[1];
    return tag ? { ok: true, version: tag, server: serverOf(kc) } : { ok: false, why: `the controller's image "${image}" has no tag` };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return { ok: false, why: /HTTP 404/.test(message) ? `no Deployment ${options.namespace}/${CONTROLLER_NAME}: not installed there` : message };
  }
}
