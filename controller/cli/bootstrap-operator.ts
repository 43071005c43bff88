// `banlieue bootstrap operator`: the install, built from the same constructs as
// dist/, printed (--dry-run) or server-side applied in dependency order.
import type { KubeConfig } from '@kubernetes/client-node';
import { FieldManager } from '../../infra/api/well-known.js';
import type { BanlieueInstallProps } from '../../infra/install/install-props.js';
import { GRANTING_LABELS } from '../../infra/install/labels.js';
import { renderInstall, renderInstallYaml, type ManifestObject } from '../../infra/install/render.js';
import { RELEASE_TAG } from '../../infra/version.js';
import { toApiFailure } from '../runtime/api-error.js';
import { serverOf } from '../runtime/kube-config.js';
import { KubeApi } from '../runtime/kube-api.js';
import { ServerSideApply } from '../runtime/server-side-apply.js';
import { CliError } from './cli-error.js';

export interface BootstrapOperatorOptions extends BanlieueInstallProps {
  readonly dryRun?: boolean;
  /** How long to wait for each CRD to be Established. */
  readonly establishTimeoutMs?: number;
}

export interface Output {
  out(text: string): void;
  progress(text: string): void;
}

const describe = (obj: ManifestObject): string => `${obj.kind} ${obj.metadata.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata.name}`;

export async function bootstrapOperator(options: BootstrapOperatorOptions, io: Output, kubeConfig: () => KubeConfig): Promise<void> {
  if (options.dryRun) {
    io.out(renderInstallYaml(options));
    return;
  }
  let kc: KubeConfig;
  try {
    kc = kubeConfig();
  } catch (err) {
    throw new CliError(err instanceof Error ? err.message : String(err));
  }
  const api = new KubeApi(kc);
  const ssa = new ServerSideApply(api, FieldManager.bootstrap);
  const charts = renderInstall(options);
  const total = charts.reduce((n, c) => n + c.objects.length, 0);
  let done = 0;
  for (const chart of charts) {
    for (const obj of chart.objects) {
      done += 1;
      try {
        const live = await ssa.apply(obj);
        io.progress(`[${done}/${total}] applied ${describe(obj)}`);
        for (const label of await removeStrayGrantingLabels(api, obj, live)) {
          io.progress(`removed label ${label} from ${describe(obj)}: this version does not grant it (an older install, or another writer, set it)`);
        }
        if (obj.kind === 'CustomResourceDefinition') {
          await waitEstablished(api, obj, options.establishTimeoutMs ?? 60_000);
        }
      } catch (err) {
        if (err instanceof CliError) throw err;
        throw new CliError(`applying ${describe(obj)}: ${explain(err, serverOf(kc))}`);
      }
    }
  }
  io.progress(`banlieue ${options.version ?? RELEASE_TAG} installed (${total} objects)`);
}

/**
 * Removes from the live object the granting labels (GRANTING_LABELS) the
 * rendered one does not carry, whoever set them. A JSON patch, each removal
 * guarded by a test of the value read, so a label changed meanwhile is left
 * for the next run. Returns the labels removed.
 */
async function removeStrayGrantingLabels(api: KubeApi, rendered: ManifestObject, live: ManifestObject): Promise<string[]> {
  const labels = live.metadata.labels ?? {};
  const stray = GRANTING_LABELS.filter((label) => labels[label] !== undefined && rendered.metadata.labels?.[label] === undefined);
  if (stray.length === 0) return [];
  const ops = stray.flatMap((label) => {
    const path = `/metadata/labels/${label.replaceAll('~', '~0').replaceAll('/', '~1')}`;
    return [
      { op: 'test', path, value: labels[label] },
      { op: 'remove', path },
    ];
  });
  await api.request('PATCH', await api.pathOf(rendered), { body: ops, contentType: 'application/json-patch+json' });
  return stray;
}

function explain(err: unknown, server: string): string {
  const failure = toApiFailure(err);
  switch (failure.kind) {
    case 'Unreachable':
      return `cannot reach the cluster at ${server}: ${failure.message}`;
    case 'Forbidden':
      return `forbidden: ${failure.message}`;
    case 'Unauthorized':
      return `unauthorized: the credentials in the kubeconfig were refused by ${server}`;
    default:
      return failure.message;
  }
}

interface CrdStatus {
  status?: { conditions?: { type: string; status: string; message?: string }[] };
}

async function waitEstablished(api: KubeApi, crd: ManifestObject, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const live = await api.get<CrdStatus>(crd);
    const conditions = live.status?.conditions ?? [];
    if (conditions.some((c) => c.type === 'Established' && c.status === 'True')) return;
    const refused = conditions.find((c) => c.type === 'NamesAccepted' && c.status === 'False');
    if (refused) throw new CliError(`CustomResourceDefinition ${crd.metadata.name}: names not accepted: ${refused.message ?? ''}`);
    if (Date.now() > deadline) {
      throw new CliError(`CustomResourceDefinition ${crd.metadata.name} not Established after ${timeoutMs / 1000}s`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
