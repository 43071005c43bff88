// `bootstrap operator --wait`: each Deployment of the install watched until it has
// rolled out, as `kubectl rollout status` judges one (observedGeneration, then
// updated, then available replicas), failing with the reason when it cannot.
import type { ManifestObject } from '../../infra/install/render.js';
import type { KubeApi } from '../runtime/kube-api.js';
import { CliError } from './cli-error.js';

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

/** The fields of a Deployment a rollout is judged by (wire names). */
export interface DeploymentState {
  metadata: { name: string; namespace?: string; generation?: number; uid?: string; annotations?: Record<string, string> };
  spec?: { replicas?: number; selector?: { matchLabels?: Record<string, string> } };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    availableReplicas?: number;
    conditions?: Condition[];
  };
}

/** A pod of the Deployment's current ReplicaSet, as far as its reason goes. */
export interface PodState {
  metadata: { name: string };
  spec?: { nodeName?: string };
  status?: {
    phase?: string;
    conditions?: Condition[];
    containerStatuses?: { name: string; state?: { waiting?: { reason?: string; message?: string } } }[];
  };
}

export type RolloutVerdict =
  | { readonly kind: 'Waiting'; readonly message: string }
  | { readonly kind: 'RolledOut'; readonly message: string }
  | { readonly kind: 'Failed'; readonly message: string };

/** What `kubectl rollout status` would say of `d` (its DeploymentStatusViewer), with the Deployment's ReplicaFailure added. */
export function decideRollout(d: DeploymentState): RolloutVerdict {
  const name = `deployment "${d.metadata.name}"`;
  const status = d.status ?? {};
  if ((d.metadata.generation ?? 0) > (status.observedGeneration ?? 0)) {
    return { kind: 'Waiting', message: `Waiting for ${name} spec update to be observed...` };
  }
  const conditions = status.conditions ?? [];
  const progressing = conditions.find((c) => c.type === 'Progressing');
  if (progressing?.reason === 'ProgressDeadlineExceeded') {
    return { kind: 'Failed', message: `${name} exceeded its progress deadline${progressing.message ? ` (${progressing.message})` : ''}` };
  }
  const failure = conditions.find((c) => c.type === 'ReplicaFailure' && c.status === 'True');
  const because = failure ? `; ${failure.reason ?? 'ReplicaFailure'}: ${failure.message ?? ''}` : '';
  const wanted = d.spec?.replicas ?? 1;
  const updated = status.updatedReplicas ?? 0;
  const available = status.availableReplicas ?? 0;
  const replicas = status.replicas ?? 0;
  if (updated < wanted) {
    return { kind: 'Waiting', message: `Waiting for ${name} rollout to finish: ${updated} out of ${wanted} new replicas have been updated...${because}` };
  }
  if (replicas > updated) {
    return { kind: 'Waiting', message: `Waiting for ${name} rollout to finish: ${replicas - updated} old replicas are pending termination...${because}` };
  }
  if (available < updated) {
    return { kind: 'Waiting', message: `Waiting for ${name} rollout to finish: ${available} of ${updated} updated replicas are available...${because}` };
  }
  return { kind: 'RolledOut', message: `${name} successfully rolled out` };
}

/**
 * Why a pod is not available, in the kubelet's or the scheduler's words:
 * a container's waiting reason (ImagePullBackOff, ErrImagePull, CrashLoopBackOff, ...),
 * else the scheduler's refusal, else that no node has taken it; undefined when it runs.
 */
export function podReason(pod: PodState): string | undefined {
  const waiting = (pod.status?.containerStatuses ?? []).flatMap((c) =>
    c.state?.waiting?.reason ? [`container ${c.name} ${c.state.waiting.reason}${c.state.waiting.message ? `: ${c.state.waiting.message}` : ''}`] : [],
  );
  if (waiting.length > 0) return `pod ${pod.metadata.name}: ${waiting.join(', ')}`;
  const scheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
  if (scheduled?.status === 'False') return `pod ${pod.metadata.name}: ${scheduled.reason ?? 'not scheduled'}: ${scheduled.message ?? ''}`;
  if (!pod.spec?.nodeName) return `pod ${pod.metadata.name}: ${pod.status?.phase ?? 'Pending'}, not scheduled to any node`;
  return undefined;
}

interface ReplicaSetState {
  metadata: { name: string; annotations?: Record<string, string>; ownerReferences?: { uid: string; controller?: boolean }[] };
  spec?: { selector?: { matchLabels?: Record<string, string> } };
}

const REVISION = 'deployment.kubernetes.io/revision';

const selectorOf = (labels: Record<string, string> | undefined): string =>
  Object.entries(labels ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(',');

/**
 * The reasons of the pods of `d`'s current ReplicaSet (the one of its revision), as far as
 * the caller may list ReplicaSets and pods; none when it may not.
 */
async function podReasons(api: KubeApi, d: DeploymentState): Promise<string[]> {
  const ns = d.metadata.namespace ?? '';
  try {
    const sets = await api.request<{ items: ReplicaSetState[] }>('GET', `/apis/apps/v1/namespaces/${ns}/replicasets`, {
      query: { labelSelector: selectorOf(d.spec?.selector?.matchLabels) },
    });
    const current = sets.items.find(
      (rs) =>
        rs.metadata.ownerReferences?.some((o) => o.controller && o.uid === d.metadata.uid) &&
        rs.metadata.annotations?.[REVISION] === d.metadata.annotations?.[REVISION],
    );
    if (!current) return [];
    const pods = await api.request<{ items: PodState[] }>('GET', `/api/v1/namespaces/${ns}/pods`, {
      query: { labelSelector: selectorOf(current.spec?.selector?.matchLabels) },
    });
    return pods.items.flatMap((p) => podReason(p) ?? []);
  } catch {
    // Pods are a hint; a caller who may not list them still gets the Deployment's verdict.
    return [];
  }
}

export interface RolloutOptions {
  /** When every rollout must have finished, a Date.now() value. */
  readonly deadline: number;
  /** How long `--timeout` was, for the message. */
  readonly timeoutText: string;
  readonly pollMs?: number;
}

/** Waits for each Deployment in `deployments` in turn; throws a CliError naming the reason when one cannot roll out. */
export async function waitForRollouts(
  api: KubeApi,
  deployments: readonly ManifestObject[],
  progress: (line: string) => void,
  options: RolloutOptions,
): Promise<void> {
  for (const deployment of deployments) {
    let last = '';
    for (;;) {
      const live = await api.get<DeploymentState>(deployment);
      const verdict = decideRollout(live);
      const reasons = verdict.kind === 'RolledOut' ? [] : await podReasons(api, live);
      const line = [verdict.message, ...reasons].join('; ');
      if (verdict.kind === 'Failed') throw new CliError(line);
      if (line !== last) progress(line);
      last = line;
      if (verdict.kind === 'RolledOut') break;
      if (Date.now() > options.deadline) {
        throw new CliError(`timed out after ${options.timeoutText} waiting for ${line.replace(/^Waiting for /, '')}`);
      }
      await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 2000));
    }
  }
}
