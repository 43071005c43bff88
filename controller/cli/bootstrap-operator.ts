// `banlieue bootstrap operator`: the install, built from the same constructs as
// dist/, printed (--dry-run) or server-side applied in dependency order, then
// (--wait) each of its Deployments watched until it has rolled out.
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
import { DEFAULT_ROLLOUT_TIMEOUT, type Duration } from './duration.js';
import { waitForRollouts } from './rollout-status.js';

export interface BootstrapOperatorOptions extends BanlieueInstallProps {
  readonly dryRun?: boolean;
  /** How long to wait for each CRD to be Established. */
  readonly establishTimeoutMs?: number;
  /**
   * Wait until every Deployment has rolled out.
   * @default true
   */
  readonly wait?: boolean;
  /**
   * How long to wait for the rollouts, in all.
   * @default 15 minutes
   */
  readonly timeout?: Duration;
}

export { DEFAULT_ROLLOUT_TIMEOUT, type Duration };

export interface Output {
  out(text: string): void;
  progress(text: string): void;
}

export const describe = (obj: Pick<ManifestObject, 'kind' | 'metadata'>): string =>
  `${obj.kind} ${obj.metadata.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata.name}`;

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
  const deployments = charts.flatMap((c) => c.objects.filter((o) => o.kind === 'Deployment'));
  if (options.wait !== false && deployments.length > 0) {
    const timeout = options.timeout ?? DEFAULT_ROLLOUT_TIMEOUT;
    io.progress(`waiting for ${deployments.length} Deployments to roll out (at most ${timeout.text}; --wait=false returns now)`);
    try {
      await waitForRollouts(api, deployments, io.progress, { deadline: Date.now() + timeout.ms, timeoutText: timeout.text });
    } catch (err) {
      if (err instanceof CliError) throw err;
      throw new CliError(`waiting for the rollout: ${explain(err, serverOf(kc))}`);
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

export function explain(err: unknown, server: string): string {
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
