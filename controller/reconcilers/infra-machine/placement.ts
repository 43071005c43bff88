// Which Provider and failure domain run a machine (pure): spec.providerRef,
// else the one Provider of this backend publishing the failure domain. The
// failure domain is the owning CAPI Machine's, else the machine's own
// spec.failureDomain, else the Provider's only one. Once the VM was created,
// the place recorded then (status.placement) wins over all of them.
import type { FailureDomainStatus, Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import { Reason } from '../../../infra/api/conditions.js';
import type { MachinePlacementRecord } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/infra-machine.js';

export interface MachinePlacementInput {
  /** The backend's name, as Providers' providerClassRef names it. */
  readonly backend: string;
  readonly namespace: string;
  /** spec.providerRef.name */
  readonly providerName?: string;
  /** spec.failureDomain: a VirtualMachine's placement, or (CAPI-owned) the legacy v1beta1 field. */
  readonly failureDomain?: string;
  /**
   * The owning CAPI Machine's spec.failureDomain. It wins over spec.failureDomain: the
   * InfraMachine contract says the machine MUST be placed in its Machine's failure domain.
   */
  readonly machineFailureDomain?: string;
  /** Providers in the machine's namespace (any backend). */
  readonly providers: readonly Provider[];
}

export type MachinePlacement =
  | { readonly ok: true; readonly provider: Provider; readonly failureDomain: FailureDomainStatus }
  | { readonly ok: false; readonly reason: Reason; readonly message: string };

export function resolveMachinePlacement(input: MachinePlacementInput): MachinePlacement {
  const { backend, namespace, providerName } = input;
  const failureDomain = input.machineFailureDomain ?? input.failureDomain;
  const mine = input.providers.filter((p) => p.spec.providerClassRef.name === backend);
  if (providerName !== undefined) {
    const provider = input.providers.find((p) => p.metadata.name === providerName);
    if (!provider) return fail(Reason.ProviderNotFound, `Provider ${providerName} (spec.providerRef) not found in namespace ${namespace}`);
    if (!mine.includes(provider)) {
      return fail(Reason.ProviderNotFound, `Provider ${providerName} is of class ${provider.spec.providerClassRef.name}, this machine needs ${backend}`);
    }
    return inProvider(provider, failureDomain);
  }
  if (failureDomain !== undefined) {
    const publishing = mine.filter((p) => p.status?.failureDomains?.some((fd) => fd.name === failureDomain));
    const [only] = publishing;
    if (!only) return fail(Reason.ProviderNotFound, `no ${backend} Provider in namespace ${namespace} publishes failure domain ${failureDomain}`);
    if (publishing.length > 1) {
      const names = publishing.map((p) => p.metadata.name).join(', ');
      return fail(Reason.ProviderNotFound, `failure domain ${failureDomain} is published by several Providers (${names}); set spec.providerRef`);
    }
    return inProvider(only, failureDomain);
  }
  const [only] = mine;
  if (!only) return fail(Reason.ProviderNotFound, `no ${backend} Provider in namespace ${namespace}`);
  if (mine.length === 1) return inProvider(only, undefined);
  return fail(Reason.WaitingForFailureDomain, 'no failure domain yet: set spec.failureDomain or spec.providerRef');
}

function inProvider(provider: Provider, failureDomain: string | undefined): MachinePlacement {
  const domains = provider.status?.failureDomains ?? [];
  const name = provider.metadata.name ?? '';
  if (failureDomain !== undefined) {
    const fd = domains.find((d) => d.name === failureDomain);
    if (fd) return { ok: true, provider, failureDomain: fd };
    const known = domains.length > 0 ? ` (it has ${domains.map((d) => d.name).join(', ')})` : '';
    return fail(Reason.FailureDomainNotFound, `Provider ${name} publishes no failure domain ${failureDomain}${known}`);
  }
  const [only] = domains;
  if (domains.length === 1 && only) return { ok: true, provider, failureDomain: only };
  if (domains.length === 0) return fail(Reason.FailureDomainNotFound, `Provider ${name} publishes no failure domains yet`);
  return fail(Reason.WaitingForFailureDomain, `Provider ${name} has ${domains.length} failure domains: set spec.failureDomain`);
}

function fail(reason: Reason, message: string): MachinePlacement {
  return { ok: false, reason, message };
}

/**
 * Where the VM was created (status.placement): that Provider, with the failure domain as it
 * publishes it now, located where it was when the VM was created (the recorded backend facts
 * win: the VM did not move). A failure domain no longer published (withdrawn, renamed) still
 * locates the VM; only a Provider that is gone, or no longer of this backend, cannot.
 */
export function resolveRecordedPlacement(backend: string, namespace: string, record: MachinePlacementRecord, providers: readonly Provider[]): MachinePlacement {
  const provider = providers.find((p) => p.metadata.name === record.provider);
  if (!provider)
    return fail(Reason.ProviderNotFound, `Provider ${record.provider}, where the VM was created (status.placement), not found in namespace ${namespace}`);
  if (provider.spec.providerClassRef.name !== backend) {
    return fail(
      Reason.ProviderNotFound,
      `Provider ${record.provider}, where the VM was created (status.placement), is of class ${provider.spec.providerClassRef.name}, this machine needs ${backend}`,
    );
  }
  const published = provider.status?.failureDomains?.find((d) => d.name === record.failureDomain);
  const raw = record.location ?? published?.attributes?.raw ?? {};
  return { ok: true, provider, failureDomain: { ...published, name: record.failureDomain, attributes: { ...published?.attributes, raw: { ...raw } } } };
}

/** What a machine names as its place: spec.providerRef, and the failure domain its CAPI Machine or its own spec gives. */
export interface NamedPlacement {
  readonly providerName?: string;
  readonly failureDomain?: string;
}

/**
 * Why the named place is not where the VM was created, in words; undefined when it names
 * nothing else (a field left unset names nothing).
 */
export function describePlacementChange(record: MachinePlacementRecord, named: NamedPlacement): string | undefined {
  const changes = [
    ...(named.providerName !== undefined && named.providerName !== record.provider ? [`Provider ${named.providerName}`] : []),
    ...(named.failureDomain !== undefined && named.failureDomain !== record.failureDomain ? [`failure domain ${named.failureDomain}`] : []),
  ];
  if (changes.length === 0) return undefined;
  return `the machine now names ${changes.join(' and ')}, but its VM was created on ${record.provider}/${record.failureDomain} (status.placement) and is not moved: it is kept, looked for and deleted there; name that place again, or delete this machine to replace it`;
}
