// Whether a Provider's class has a provider role running, read from that role's Lease (pure), and
// the Ready=False NoProviderRole the controller writes when none is. The controller writes Ready
// only then: a running role writes its own, which replaces ours (docs/adr/0030-the-controller-says-when-no-provider-role-runs.md).
import type { BackendApi } from '../../../infra/api/backend-api.js';
import type { Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import { ConditionType, Reason } from '../../../infra/api/conditions.js';
import { providerLeaseName } from '../../../infra/api/well-known.js';
import { findCondition, type ConditionInput } from '../../runtime/conditions.js';
import { shardOf } from '../provider-shard/claims.js';

/** A Lease as the controller saw it: judged by how long its record has not changed (as leader election does), never by the holder's clock. */
export interface LeaseSeen {
  readonly name: string;
  /** Undefined or '' once the role released it (a clean stop). */
  readonly holder: string | undefined;
  readonly durationMs: number;
  /** Since the controller last saw its holder or renewTime change. */
  readonly unchangedForMs: number;
}

/** What the controller does about a Provider: write Ready=False NoProviderRole, or leave Ready to the role (and look again when its Lease would expire). */
export type RoleDecision = { readonly ready: ConditionInput } | { readonly ready?: undefined; readonly recheckAfterMs?: number };

/** Where the controller looks for a Provider's role: the Lease namespace, and the Leases it may hold. */
export interface RoleLookup {
  readonly leaseNamespace: string;
  /** The Leases of those names the controller sees (providerRoleLeaseNames). */
  readonly leases: readonly LeaseSeen[];
}

/**
 * The Leases a role serving `provider` leads on: its class's, one scoped to this Provider (`--provider`),
 * or that of the shard holding its claim (`--provider-selector`, ADR 33).
 */
export function providerRoleLeaseNames(provider: Provider): string[] {
  const backend = provider.spec.providerClassRef.name;
  const shard = shardOf(provider);
  return [providerLeaseName(backend), providerLeaseName(backend, provider.metadata.name ?? ''), ...(shard ? [shard] : [])];
}

/** The margin past a Lease's expiry before it is looked at again: its last renewal may be just under way. */
const RECHECK_MARGIN_MS = 1000;

/**
 * A live Lease: leave Ready to its role. Leases that all expired or were released: the role stopped.
 * No Lease at all: a role may still run without leader election (`--no-leader-elect`), so only a
 * Provider no role ever wrote Ready for is told. A class that runs on its hosts leads on Leases in
 * the Provider's namespace, which the controller does not read: likewise only until a host writes.
 */
export function decideProviderRole(provider: Provider, backend: Pick<BackendApi, 'name' | 'providerRuns'>, lookup: RoleLookup): RoleDecision {
  const ready = findCondition(provider.status?.conditions, ConditionType.Ready);
  const neverServed = ready === undefined || ready.reason === Reason.NoProviderRole;
  const notRunning = (message: string): RoleDecision => ({ ready: { type: ConditionType.Ready, status: 'False', reason: Reason.NoProviderRole, message } });
  if (backend.providerRuns === 'host') {
    if (!neverServed) return {};
    const ns = provider.metadata.namespace ?? '';
    return notRunning(
      `no host serves this Provider yet: on the ${backend.name} host, run banlieue host install --namespace ${ns} --provider ${provider.metadata.name ?? ''}`,
    );
  }
  const live = lookup.leases.filter((l) => l.holder && l.unchangedForMs <= l.durationMs);
  if (live.length > 0) return { recheckAfterMs: Math.min(...live.map((l) => l.durationMs - l.unchangedForMs)) + RECHECK_MARGIN_MS };
  const howToRun = `run banlieue provider ${backend.name}, or install it (banlieue bootstrap operator --backends with ${backend.name})`;
  const [lease] = lookup.leases;
  if (lease === undefined) return neverServed ? notRunning(`no banlieue provider ${backend.name} role is running: ${howToRun}`) : {};
  const where = `${lookup.leaseNamespace}/${lease.name}`;
  const why = lease.holder
    ? `its Lease ${where} (held by ${lease.holder}) was not renewed within ${lease.durationMs / 1000} s`
    : `it released its Lease ${where}`;
  return notRunning(`the banlieue provider ${backend.name} role is not running (${why}): ${howToRun}`);
}
