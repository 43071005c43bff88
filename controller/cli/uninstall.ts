// `banlieue uninstall`: removes what `bootstrap operator` applies, read from the same
// rendered install (every optional part in, so whatever flags installed it), the
// Deployments first so that nothing acts on what goes after. Kept unless asked: the
// CRDs, and with them every user object; the Namespace while anything else is in it.
import type { KubeConfig } from '@kubernetes/client-node';
import { BACKENDS } from '../../infra/api/backends.js';
import { ALL_KINDS, INFRA_MACHINE_KINDS } from '../../infra/api/kinds.js';
import { apiVersionOf } from '../../infra/api/kind.js';
import { APP_NAME, Finalizer, Label } from '../../infra/api/well-known.js';
import { renderInstall, type ManifestObject } from '../../infra/install/render.js';
import { removeFinalizer } from '../runtime/finalizers.js';
import { toApiFailure } from '../runtime/api-error.js';
import { KubeApi } from '../runtime/kube-api.js';
import { serverOf } from '../runtime/kube-config.js';
import { describe, explain, type Duration, type Output } from './bootstrap-operator.js';
import { CliError } from './cli-error.js';
import { listSoon, namespaceLeftovers } from './namespace-leftovers.js';

export interface UninstallOptions {
  /** The namespace `bootstrap operator --namespace` installed into. */
  readonly namespace: string;
  /** Delete the CRDs too, and so every object of banlieue's kinds. */
  readonly crds: boolean;
  /** With `crds`: go on while objects of banlieue's kinds exist, taking banlieue's finalizers off them. */
  readonly force: boolean;
  readonly dryRun: boolean;
  /** How long to wait for what was deleted to be gone. */
  readonly timeout: Duration;
}

interface Live {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; finalizers?: string[]; resourceVersion?: string };
}

/** The finalizers banlieue's roles put on objects of its kinds; each stands for backend work only a running role does. */
const BANLIEUE_FINALIZERS: readonly string[] = [
  Finalizer.virtualMachine,
  Finalizer.providerInUse,
  ...INFRA_MACHINE_KINDS.map((k) => Finalizer.infraMachine(k.kind)),
];

const CRDS_CHART = 'banlieue-crds';
const NAMESPACE_CHART = 'banlieue-namespace';

const keyOf = (o: ManifestObject | Live): string => `${o.apiVersion.includes('/') ? o.apiVersion.split('/')[0] : ''}/${o.kind}/${o.metadata.name}`;

export async function uninstall(options: UninstallOptions, io: Output, kubeConfig: () => KubeConfig): Promise<void> {
  let kc: KubeConfig;
  try {
    kc = kubeConfig();
  } catch (err) {
    throw new CliError(err instanceof Error ? err.message : String(err));
  }
  try {
    await run(new KubeApi(kc), options, io);
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw new CliError(`uninstalling: ${explain(err, serverOf(kc))}`);
  }
}

async function run(api: KubeApi, options: UninstallOptions, io: Output): Promise<void> {
  const { namespace, dryRun } = options;
  const charts = renderInstall({
    namespace,
    backends: BACKENDS,
    admissionPolicies: true,
    networkPolicies: true,
    ...(await credentialNamespaces(api, namespace)),
  });
  const userObjects = options.crds ? await objectsOfBanlieueKinds(api) : [];
  if (options.crds) {
    io.progress(
      "warning: --crds deletes every object of banlieue's kinds (VirtualMachines, Providers, VMClasses, VMImages, machines, their templates and clusters) in every namespace",
    );
    if (userObjects.length > 0 && !options.force) throw new CliError(refusal(userObjects));
  }
  const objects = charts
    .filter((c) => c.name !== NAMESPACE_CHART && (options.crds || c.name !== CRDS_CHART))
    .flatMap((c) => c.objects)
    .reverse();
  const deleted: ManifestObject[] = [];
  // The Deployments first, and gone with their pods (a role stopping could still add a finalizer
  // back) before anything else goes: no role then acts on what follows.
  for (const obj of objects.filter((o) => o.kind === 'Deployment')) {
    if (await deleteIfOurs(api, obj, dryRun, io)) deleted.push(obj);
  }
  if (!dryRun) await waitGone(api, deleted, options.timeout, io);
  let released = false;
  for (const obj of objects.filter((o) => o.kind !== 'Deployment')) {
    if (obj.kind === 'CustomResourceDefinition' && !released) {
      await releaseUserObjects(api, userObjects, dryRun, io);
      released = true;
    }
    if (await deleteIfOurs(api, obj, dryRun, io)) deleted.push(obj);
  }
  const namespaceObj = charts.find((c) => c.name === NAMESPACE_CHART)?.objects[0];
  if (namespaceObj) {
    const ours = new Set(
      charts
        .flatMap((c) => c.objects)
        .filter((o) => o.metadata.namespace === namespace)
        .map(keyOf),
    );
    const leftovers = await namespaceLeftovers(api, namespace, ours).catch((err: unknown) => [`(could not look: ${explain(err, api.server)})`]);
    if (leftovers.length > 0) {
      const shown = leftovers.slice(0, 10).join(', ') + (leftovers.length > 10 ? `, and ${leftovers.length - 10} more` : '');
      io.out(`kept ${describe(namespaceObj)}: it holds what the install did not put there (${shown})\n`);
    } else if (await deleteIfOurs(api, namespaceObj, dryRun, io)) {
      deleted.push(namespaceObj);
    }
  }
  if (dryRun) return;
  await waitGone(api, deleted, options.timeout, io);
  io.progress(
    `banlieue uninstalled (${deleted.length} objects deleted)${options.crds ? '' : '; the CRDs and every object of their kinds are kept (--crds deletes them)'}`,
  );
}

/** Deletes `obj` when it exists and carries the install's label; says what it did. Whether it deleted. */
async function deleteIfOurs(api: KubeApi, obj: ManifestObject, dryRun: boolean, io: Output): Promise<boolean> {
  const live = await api.get<Live>(obj).catch((err: unknown) => {
    if (toApiFailure(err).kind === 'NotFound') return undefined;
    throw err;
  });
  if (!live) return false;
  if (live.metadata.labels?.[Label.partOf] !== APP_NAME) {
    io.out(`kept ${describe(obj)}: not labelled ${Label.partOf}=${APP_NAME}, so not installed by banlieue\n`);
    return false;
  }
  io.out(`${dryRun ? 'would delete' : 'deleted'} ${describe(obj)}\n`);
  if (dryRun) return true;
  // Foreground: a Deployment is gone only once its ReplicaSets and pods are.
  await api.request('DELETE', await api.pathOf(obj), { query: { propagationPolicy: 'Foreground' } }).catch((err: unknown) => {
    if (toApiFailure(err).kind !== 'NotFound') throw err;
  });
  return true;
}

/**
 * Namespaces other than the install's holding the per-namespace credential Roles of
 * `--provider-namespaces`: the install is rendered with them, so that their Roles are found.
 */
async function credentialNamespaces(api: KubeApi, namespace: string): Promise<{ providerNamespaces?: string[] }> {
  const roles = await api.request<{ items: Live[] }>('GET', '/apis/rbac.authorization.k8s.io/v1/roles', {
    query: { labelSelector: `${Label.partOf}=${APP_NAME}` },
  });
  const namespaces = [...new Set(roles.items.map((r) => r.metadata.namespace ?? ''))].filter((ns) => ns !== '' && ns !== namespace).sort();
  return namespaces.length > 0 ? { providerNamespaces: namespaces } : {};
}

/** Every object of banlieue's kinds, in every namespace (none of a kind whose CRD is not there). */
async function objectsOfBanlieueKinds(api: KubeApi): Promise<Live[]> {
  const found: Live[] = [];
  for (const def of ALL_KINDS) {
    const apiVersion = apiVersionOf(def);
    const items = await listSoon<Live>(api, `/apis/${apiVersion}/${def.plural}`);
    found.push(...items.map((item) => ({ ...item, apiVersion, kind: def.kind })));
  }
  return found;
}

function refusal(objects: readonly Live[]): string {
  const counts = new Map<string, number>();
  for (const o of objects) counts.set(o.kind, (counts.get(o.kind) ?? 0) + 1);
  const listed = [...counts].map(([kind, n]) => `${n} ${kind}`).join(', ');
  return (
    `refusing to delete the CRDs while objects of their kinds exist (${listed}): deleting a CRD deletes every object of its kind, ` +
    'and their finalizers wait for roles that are being uninstalled. Delete them first with banlieue still running (their VMs are then destroyed ' +
    'as each deletionPolicy says), or add --force to remove them and leave their VMs on their backends, unmanaged'
  );
}

/**
 * Takes banlieue's finalizers off `objects` (--force, after the Deployments are gone), so that
 * deleting the CRDs removes them at once and no role, reinstalled later, acts on their deletion:
 * their VMs stay on the backends, unmanaged. Other components' finalizers stay.
 */
async function releaseUserObjects(api: KubeApi, objects: readonly Live[], dryRun: boolean, io: Output): Promise<void> {
  for (const obj of objects) {
    for (const finalizer of (obj.metadata.finalizers ?? []).filter((f) => BANLIEUE_FINALIZERS.includes(f))) {
      io.out(`${dryRun ? 'would remove' : 'removed'} finalizer ${finalizer} from ${describe(obj)}: its backend VM, if any, is left as it is\n`);
      if (!dryRun) await removeFinalizer(api, obj, finalizer);
    }
  }
}

async function waitGone(api: KubeApi, deleted: readonly ManifestObject[], timeout: Duration, io: Output): Promise<void> {
  const deadline = Date.now() + timeout.ms;
  let remaining = [...deleted];
  let said = 0;
  for (;;) {
    const stillThere: ManifestObject[] = [];
    for (const obj of remaining) {
      const gone = await api.get(obj).then(
        () => false,
        (err: unknown) => (toApiFailure(err).kind === 'NotFound' ? true : Promise.reject(err)),
      );
      if (!gone) stillThere.push(obj);
    }
    remaining = stillThere;
    if (remaining.length === 0) return;
    if (remaining.length !== said) io.progress(`waiting for ${remaining.map(describe).join(', ')} to be gone`);
    said = remaining.length;
    if (Date.now() > deadline) throw new CliError(`timed out after ${timeout.text} waiting for ${remaining.map(describe).join(', ')} to be gone`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}
