// InfraCluster status, decided purely (upstream §2.8, ADR-0002; CAPI v1beta2
// InfraCluster contract). The cluster talks to no backend: it publishes the
// failure domains its Providers discovered. Same input, same output, so an
// idle reconcile compares equal to the current status and writes nothing.
import type { ClusterFailureDomain } from '../../../infra/api/machine-fields.js';
import type { LabelSelector } from '../../../infra/api/meta.js';
import { ConditionType, Reason } from '../../../infra/api/conditions.js';
import type { Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { InfraCluster, InfraClusterStatus } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/infra-cluster.js';
import { setConditions, type ConditionInput } from '../../runtime/conditions.js';
import { compareText } from '../../scheduler/compare-text.js';
import { matchesSelector } from '../../scheduler/label-selector.js';
import { isPaused, pausedCondition } from '../paused.js';

/** CAPI v1beta2 caps InfraCluster status.failureDomains at 100 items. */
export const MAX_CLUSTER_FAILURE_DOMAINS = 100;

/** Items a condition message lists before summarising the rest. */
const MAX_LISTED = 10;

/** Attribute key naming the Provider a failure domain comes from. */
export const PROVIDER_ATTRIBUTE = 'provider';

/** Which Providers the cluster uses, and which spec.providerRefs named none. */
interface ProviderSelection {
  /** Sorted by name; all of the cluster's backend. */
  readonly providers: readonly Provider[];
  /** Names in spec.providerRefs with no Provider in the namespace, in spec order. */
  readonly missingRefs: readonly string[];
  /** `name (class)` of spec.providerRefs naming a Provider of another backend, in spec order: never used. */
  readonly otherBackendRefs: readonly string[];
  readonly byRefs: boolean;
}

/** The published failure domains and what was dropped to get them. */
interface Aggregation {
  readonly failureDomains: ClusterFailureDomain[];
  /** `name (Provider p)` of failure domains dropped because an earlier Provider published the name. */
  readonly duplicates: readonly string[];
  /** Failure domains before the cap. */
  readonly total: number;
}

/**
 * The status an InfraCluster should have, given the Providers of its namespace.
 * While paused, only the Paused and Ready conditions change.
 * @param backend the backend of the cluster's kind (a VSphereCluster's is vsphere): only its
 *   Providers count, since a machine of this backend can run nowhere else.
 * @param providers every Provider in the cluster's namespace (any backend), in any order.
 * @param pausedCluster the owning CAPI Cluster, when its spec.paused is true.
 */
export function decideInfraClusterStatus(
  cluster: InfraCluster,
  backend: string,
  providers: readonly Provider[],
  now: Date,
  pausedCluster?: string,
): InfraClusterStatus {
  const current = cluster.status ?? {};
  const generation = cluster.metadata.generation;
  if (isPaused(cluster, pausedCluster)) {
    return {
      ...current,
      conditions: setConditions(current.conditions, [pausedCondition(cluster, generation, pausedCluster), pausedReady(generation)], now),
    };
  }

  const selection = selectProviders(cluster, backend, providers);
  const aggregation = aggregateFailureDomains(selection.providers, cluster.spec.controlPlaneFailureDomainSelector);
  const published = aggregation.failureDomains.length > 0;
  const ready = readyCondition(cluster, backend, selection, aggregation, generation);

  return {
    initialization: { provisioned: published || current.initialization?.provisioned === true },
    ...(cluster.spec.controlPlaneEndpoint ? { controlPlaneEndpoint: { ...cluster.spec.controlPlaneEndpoint } } : {}),
    // CAPI requires 1–100 items when the list is present: omit it when empty.
    ...(published ? { failureDomains: aggregation.failureDomains } : {}),
    conditions: setConditions(current.conditions, [pausedCondition(cluster, generation), ready], now),
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
  };
}

/**
 * The cluster's backend's Providers: spec.providerRefs when non-empty (exactly
 * those names), else spec.providerSelector (empty matches all).
 */
function selectProviders(cluster: InfraCluster, backend: string, providers: readonly Provider[]): ProviderSelection {
  const refs = cluster.spec.providerRefs ?? [];
  const sorted = [...providers].sort((a, b) => compareText(nameOf(a), nameOf(b)));
  const mine = sorted.filter((p) => p.spec.providerClassRef.name === backend);
  if (refs.length > 0) {
    const byName = new Map(sorted.map((p) => [nameOf(p), p]));
    const wanted = new Set(refs.map((ref) => ref.name));
    const classOf = (name: string): string | undefined => byName.get(name)?.spec.providerClassRef.name;
    return {
      providers: mine.filter((p) => wanted.has(nameOf(p))),
      missingRefs: refs.map((ref) => ref.name).filter((name) => !byName.has(name)),
      otherBackendRefs: refs
        .map((ref) => ref.name)
        .filter((name) => byName.has(name) && classOf(name) !== backend)
        .map((name) => `${name} (${classOf(name) ?? ''})`),
      byRefs: true,
    };
  }
  return {
    providers: mine.filter((p) => matchesSelector(p.metadata.labels, cluster.spec.providerSelector)),
    missingRefs: [],
    otherBackendRefs: [],
    byRefs: false,
  };
}

/**
 * Every failure domain of `providers` in the CAPI list shape, sorted by name.
 * A name published twice keeps the first Provider's (Providers in name order),
 * so the result does not depend on list order.
 */
function aggregateFailureDomains(providers: readonly Provider[], controlPlaneSelector: LabelSelector | undefined): Aggregation {
  const byName = new Map<string, ClusterFailureDomain>();
  const duplicates: string[] = [];
  for (const provider of providers) {
    const providerName = nameOf(provider);
    for (const fd of provider.status?.failureDomains ?? []) {
      if (byName.has(fd.name)) {
        duplicates.push(`${fd.name} (Provider ${providerName})`);
        continue;
      }
      byName.set(fd.name, {
        name: fd.name,
        // An unset selector matches everything: every failure domain is control-plane eligible.
        controlPlane: matchesSelector(fd.labels, controlPlaneSelector),
        attributes: { ...fd.labels, [PROVIDER_ATTRIBUTE]: providerName },
      });
    }
  }
  const all = [...byName.values()].sort((a, b) => compareText(a.name, b.name));
  return { failureDomains: all.slice(0, MAX_CLUSTER_FAILURE_DOMAINS), duplicates, total: all.length };
}

function readyCondition(
  cluster: InfraCluster,
  backend: string,
  selection: ProviderSelection,
  aggregation: Aggregation,
  generation: number | undefined,
): ConditionInput {
  const withGeneration = (input: ConditionInput): ConditionInput => (generation === undefined ? input : { ...input, observedGeneration: generation });
  const missing = selection.missingRefs.length > 0 ? `spec.providerRefs not found: ${selection.missingRefs.join(', ')}` : undefined;
  const otherBackend =
    selection.otherBackendRefs.length > 0 ? `spec.providerRefs not of class ${backend}, ignored: ${selection.otherBackendRefs.join(', ')}` : undefined;

  if (selection.providers.length === 0) {
    const namespace = cluster.metadata.namespace ?? '';
    const notFound = selection.missingRefs.length > 0 ? `: ${selection.missingRefs.join(', ')}` : '';
    const why = selection.byRefs
      ? joinNotes([`No ${backend} Provider named in spec.providerRefs exists in namespace ${namespace}${notFound}`, otherBackend])
      : cluster.spec.providerSelector
        ? `No ${backend} Provider in namespace ${namespace} matches spec.providerSelector`
        : `No ${backend} Provider exists in namespace ${namespace}`;
    return withGeneration({ type: ConditionType.Ready, status: 'False', reason: Reason.NoProviders, message: why });
  }

  const providerNames = selection.providers.map(nameOf).join(', ');
  if (aggregation.failureDomains.length === 0) {
    const message = [`${plural(selection.providers.length, 'Provider')} (${providerNames}) publish no failure domains yet`, missing, otherBackend];
    return withGeneration({
      type: ConditionType.Ready,
      status: 'False',
      reason: Reason.NoFailureDomainMatched,
      message: joinNotes(message),
    });
  }

  const published = aggregation.failureDomains.length;
  const message = [
    `${plural(published, 'failure domain')} from ${plural(selection.providers.length, 'Provider')}`,
    missing,
    otherBackend,
    aggregation.total > published
      ? `capped at ${MAX_CLUSTER_FAILURE_DOMAINS} of ${aggregation.total} failure domains (CAPI limit); the rest are not published`
      : undefined,
    aggregation.duplicates.length > 0 ? `duplicate names ignored: ${listCapped(aggregation.duplicates)}` : undefined,
  ];
  return withGeneration({ type: ConditionType.Ready, status: 'True', reason: Reason.Reconciled, message: joinNotes(message) });
}

function pausedReady(generation: number | undefined): ConditionInput {
  return {
    type: ConditionType.Ready,
    status: 'False',
    reason: Reason.Paused,
    message: 'Reconciliation is paused',
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
  };
}

function nameOf(provider: Provider): string {
  return provider.metadata.name ?? '';
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/** At most MAX_LISTED items, then how many more: messages stay readable. */
function listCapped(items: readonly string[]): string {
  const shown = items.slice(0, MAX_LISTED).join(', ');
  return items.length > MAX_LISTED ? `${shown} and ${items.length - MAX_LISTED} more` : shown;
}

function joinNotes(parts: readonly (string | undefined)[]): string {
  return parts.filter((p): p is string => p !== undefined).join('; ');
}
