// Whether the controller says NoProviderRole on a Provider: from its class's role's Lease, and only where no role may be serving.
import { describe, expect, it } from 'vitest';
import type { Provider } from '../../../../infra/api/banlieue.io/v1alpha1/provider.js';
import { Reason } from '../../../../infra/api/conditions.js';
import { decideProviderRole, providerRoleLeaseNames, type LeaseSeen } from '../../../../controller/reconcilers/provider-role/decide.js';

const cluster = { name: 'proxmox', providerRuns: 'cluster' } as const;
const host = { name: 'cloud-hypervisor', providerRuns: 'host' } as const;
const provider = (ready?: { status: string; reason: string }): Provider =>
  ({
    apiVersion: 'banlieue.io/v1alpha1',
    kind: 'Provider',
    metadata: { name: 'lab', namespace: 'vms' },
    spec: { providerClassRef: { name: 'proxmox' }, connection: { endpoint: 'https://pve:8006' } },
    ...(ready ? { status: { conditions: [{ type: 'Ready', ...ready, message: '', lastTransitionTime: '2030-01-01T00:00:00Z' }] } } : {}),
  }) as Provider;
const lease = (holder: string | undefined, unchangedForMs: number): LeaseSeen => ({
  name: 'banlieue-provider-proxmox',
  holder,
  durationMs: 15_000,
  unchangedForMs,
});
const lookup = (...leases: LeaseSeen[]) => ({ leaseNamespace: 'banlieue-system', leases });
const servedReady = { status: 'True', reason: Reason.Reconciled };

describe('NoProviderRole', () => {
  it("looks for the class's Lease and the one of a role scoped to this Provider", () => {
    expect(providerRoleLeaseNames(provider())).toEqual(['banlieue-provider-proxmox', 'banlieue-provider-proxmox-lab']);
  });

  it('looks for the Lease of the shard holding the Provider too, so a shard serving it is a role running', () => {
    const p = provider(servedReady);
    const claimed = { ...p, metadata: { ...p.metadata, annotations: { 'banlieue.io/provider-shard': 'banlieue-provider-proxmox-shard-0123456789' } } };
    expect(providerRoleLeaseNames(claimed)).toContain('banlieue-provider-proxmox-shard-0123456789');
    const shardLease = { ...lease('pod-s', 5_000), name: 'banlieue-provider-proxmox-shard-0123456789' };
    // The class's own Lease released (the install moved to shards), the shard's live: Ready stays the shard's.
    expect(decideProviderRole(claimed, cluster, lookup(lease('', 60_000), shardLease))).toEqual({ recheckAfterMs: 11_000 });
  });

  it('leaves Ready to a role whose Lease is held and renewed, and looks again just after it would expire', () => {
    expect(decideProviderRole(provider(servedReady), cluster, lookup(lease('pod-a', 5_000)))).toEqual({ recheckAfterMs: 11_000 });
  });

  it.each([
    ['released', lease(undefined, 0), 'it released its Lease banlieue-system/banlieue-provider-proxmox'],
    [
      'not renewed within its duration',
      lease('pod-a', 15_001),
      'its Lease banlieue-system/banlieue-provider-proxmox (held by pod-a) was not renewed within 15 s',
    ],
  ])('says Ready=False NoProviderRole over a role Ready when its Lease was %s, naming the Lease and how to run the role', (_, seen, why) => {
    const { ready } = decideProviderRole(provider(servedReady), cluster, lookup(seen));
    expect(ready).toMatchObject({ type: 'Ready', status: 'False', reason: Reason.NoProviderRole });
    expect(ready?.message).toContain(why);
    expect(ready?.message).toContain('run banlieue provider proxmox');
  });

  it('says NoProviderRole without any Lease only while no role ever wrote Ready (a role may run without leader election)', () => {
    expect(decideProviderRole(provider(), cluster, lookup()).ready).toMatchObject({
      reason: Reason.NoProviderRole,
      message: expect.stringContaining('no banlieue provider proxmox role is running'),
    });
    expect(decideProviderRole(provider(servedReady), cluster, lookup())).toEqual({});
  });

  it('tells a Provider of a class that runs on its hosts how to install a host, until a host writes Ready', () => {
    expect(decideProviderRole(provider(), host, lookup()).ready?.message).toContain('banlieue host install --namespace vms --provider lab');
    expect(decideProviderRole(provider(servedReady), host, lookup())).toEqual({});
  });
});
