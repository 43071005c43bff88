// Provider status from one discovery outcome (pure).
import type { FailureDomainStatus, Provider, ProviderStatus } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import { ConditionType, Reason } from '../../../infra/api/conditions.js';
import { findCondition, setConditions, type ConditionInput } from '../../runtime/conditions.js';
import { isPaused, pausedCondition } from '../paused.js';

export type DiscoveryOutcome =
  /** `withdrawn`: the backend publishes no failure domain on purpose (over capacity): Ready=False with its reason. */
  | { readonly ok: true; readonly failureDomains: FailureDomainStatus[]; readonly withdrawn?: { readonly reason: Reason; readonly message: string } }
  | { readonly ok: false; readonly reason: Reason; readonly message: string };

/**
 * `olderOnEndpoint`: an older Provider naming the same backend endpoint (endpoint.ts); said by
 * EndpointExclusive only, so that Ready, and the VMs placed here, stay as they are.
 */
export function decideProviderStatus(provider: Provider, outcome: DiscoveryOutcome | undefined, now: Date, olderOnEndpoint?: Provider): ProviderStatus {
  const current = provider.status ?? {};
  const generation = provider.metadata.generation;
  if (isPaused(provider) || !outcome) {
    // The controller's NoProviderRole is not true of a role that runs: Ready is not known while paused.
    const unknown: ConditionInput[] =
      findCondition(current.conditions, ConditionType.Ready)?.reason === Reason.NoProviderRole
        ? [{ type: ConditionType.Ready, status: 'Unknown', reason: Reason.Paused, message: 'paused: the backend is not read while the Provider is paused' }]
        : [];
    return { ...current, conditions: setConditions(current.conditions, [...unknown, pausedCondition(provider, generation)], now) };
  }
  if (!outcome.ok) {
    const down: ConditionInput = { type: ConditionType.ProviderReachable, status: 'False', reason: outcome.reason, message: outcome.message };
    const ready: ConditionInput = { type: ConditionType.Ready, status: 'False', reason: outcome.reason, message: outcome.message };
    // Keep the last known failure domains: placed VMs stay placed while the backend is away.
    return {
      ...current,
      conditions: setConditions(current.conditions, [down, ready, endpointExclusive(provider, olderOnEndpoint), pausedCondition(provider, generation)], now),
    };
  }
  const count = outcome.failureDomains.length;
  const reachable: ConditionInput = { type: ConditionType.ProviderReachable, status: 'True', reason: Reason.Reconciled, message: '' };
  const unusable = unusableClasses(provider, outcome.failureDomains);
  // A class no failure domain offers is a typo or a missing datastore/port group: said, but the others still work.
  const ready: ConditionInput = outcome.withdrawn
    ? { type: ConditionType.Ready, status: 'False', reason: outcome.withdrawn.reason, message: `failure domains withdrawn: ${outcome.withdrawn.message}` }
    : {
        type: ConditionType.Ready,
        status: 'True',
        reason: unusable.length > 0 ? Reason.CapabilitiesIncomplete : Reason.Reconciled,
        message: `${count} failure domain${count === 1 ? '' : 's'}${unusable.length > 0 ? `; usable in none: ${unusable.join(', ')}` : ''}`,
      };
  return {
    ...(count > 0 ? { failureDomains: outcome.failureDomains } : {}),
    failureDomainCount: count,
    conditions: setConditions(current.conditions, [reachable, ready, endpointExclusive(provider, olderOnEndpoint), pausedCondition(provider, generation)], now),
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
  };
}

/** The API server refused the status a discovery found (`message`, its words): Ready=False, the rest as last written. */
export function refusedProviderStatus(provider: Provider, message: string, now: Date): ProviderStatus {
  const current = provider.status ?? {};
  const ready: ConditionInput = { type: ConditionType.Ready, status: 'False', reason: Reason.StatusRefused, message };
  return { ...current, conditions: setConditions(current.conditions, [ready], now) };
}

/** Declared storage and network classes that no failure domain offers, e.g. `storage class fast`. */
function unusableClasses(provider: Provider, domains: readonly FailureDomainStatus[]): string[] {
  const offered = (pick: (fd: FailureDomainStatus) => readonly string[] | undefined): Set<string> => new Set(domains.flatMap((fd) => pick(fd) ?? []));
  const storage = offered((fd) => fd.attributes?.availableStorageClasses);
  const network = offered((fd) => fd.attributes?.availableNetworkClasses);
  const capabilities = provider.spec.capabilities;
  return [
    ...(capabilities?.storageClasses ?? []).filter((c) => !storage.has(c.name)).map((c) => `storage class ${c.name}`),
    ...(capabilities?.networkClasses ?? []).filter((c) => !network.has(c.name)).map((c) => `network class ${c.name}`),
  ];
}

/**
 * EndpointExclusive: False when an older Provider names the same endpoint; it is named when it is in
 * this Provider's namespace, and only said to exist when in another (a tenant learns no other namespace).
 */
export function endpointExclusive(provider: Provider, older: Provider | undefined): ConditionInput {
  if (!older) return { type: ConditionType.EndpointExclusive, status: 'True', reason: Reason.Reconciled, message: '' };
  const who =
    older.metadata.namespace === provider.metadata.namespace
      ? `Provider ${older.metadata.namespace ?? ''}/${older.metadata.name ?? ''} names`
      : 'A Provider of another namespace names';
  return {
    type: ConditionType.EndpointExclusive,
    status: 'False',
    reason: Reason.EndpointShared,
    message: `${who} the same endpoint (${provider.spec.connection.endpoint}): both would manage one inventory, and their sweeps and adoptions could fight; delete one of them, or point it elsewhere`,
  };
}
