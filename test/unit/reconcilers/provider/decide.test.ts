// Provider status from one discovery: failure domains published, or withdrawn with the backend's reason.
import { describe, expect, it } from 'vitest';
import type { Provider } from '../../../../infra/api/banlieue.io/v1alpha1/provider.js';
import { Reason } from '../../../../infra/api/conditions.js';
import { decideProviderStatus, refusedProviderStatus } from '../../../../controller/reconcilers/provider/decide.js';

const now = new Date('2030-01-01T00:00:00Z');
const provider: Provider = {
  apiVersion: 'banlieue.io/v1alpha1',
  kind: 'Provider',
  metadata: { name: 'host-a', namespace: 'vms', generation: 2 },
  spec: { providerClassRef: { name: 'cloud-hypervisor' }, connection: { endpoint: 'unix://host-a/var/lib/ch' } },
  status: { failureDomains: [{ name: 'host-a' }] },
} as Provider;
const condition = (status: ReturnType<typeof decideProviderStatus>, type: string): unknown => status.conditions?.find((c) => c.type === type);

describe('Provider status', () => {
  it('publishes what discovery found: Ready=True Reconciled', () => {
    const status = decideProviderStatus(provider, { ok: true, failureDomains: [{ name: 'host-a' }] }, now);
    expect(status.failureDomains).toEqual([{ name: 'host-a' }]);
    expect(condition(status, 'Ready')).toMatchObject({ status: 'True', reason: Reason.Reconciled, message: '1 failure domain' });
  });

  it.each([
    [[{ name: 'a' }, { name: 'b' }], 2],
    [[], 0],
  ])('counts the failure domains it publishes in status.failureDomainCount (%j: %i)', (failureDomains, count) => {
    expect(decideProviderStatus(provider, { ok: true, failureDomains }, now).failureDomainCount).toBe(count);
  });

  it("replaces the controller's NoProviderRole with Ready=Unknown Paused on a paused Provider, and leaves a role's own Ready as it was", () => {
    const paused = (ready: { reason: string; status: 'True' | 'False' }): Provider =>
      ({
        ...provider,
        spec: { ...provider.spec, paused: true },
        status: { conditions: [{ type: 'Ready', ...ready, message: '', lastTransitionTime: '2029-01-01T00:00:00Z' }] },
      }) as Provider;
    const told = decideProviderStatus(paused({ status: 'False', reason: Reason.NoProviderRole }), undefined, now);
    expect(condition(told, 'Ready')).toMatchObject({ status: 'Unknown', reason: Reason.Paused });
    const own = decideProviderStatus(paused({ status: 'True', reason: Reason.Reconciled }), undefined, now);
    expect(condition(own, 'Ready')).toMatchObject({ status: 'True', reason: Reason.Reconciled });
  });

  it('says a status the API server refused in Ready=False StatusRefused, with its words, keeping what was written before', () => {
    const words = 'Provider.banlieue.io "host-a" is invalid: status.failureDomains: Too many: 260: must have at most 256 items';
    const status = refusedProviderStatus(provider, words, now);
    expect(status.failureDomains).toEqual([{ name: 'host-a' }]);
    expect(condition(status, 'Ready')).toMatchObject({ status: 'False', reason: Reason.StatusRefused, message: words });
    expect(condition(status, 'ProviderReachable')).toBeUndefined();
  });

  it('withdraws the failure domains with the reason the backend gives: reachable, Ready=False CapacityExceeded', () => {
    const withdrawn = { reason: Reason.CapacityExceeded, message: 'memory 97% used, at or over capacity.maxMemoryUsedPercent 90' };
    const status = decideProviderStatus(provider, { ok: true, failureDomains: [], withdrawn }, now);
    expect(status.failureDomains).toBeUndefined();
    expect(condition(status, 'ProviderReachable')).toMatchObject({ status: 'True', reason: Reason.Reconciled });
    expect(condition(status, 'Ready')).toMatchObject({
      status: 'False',
      reason: 'CapacityExceeded',
      message: `failure domains withdrawn: ${withdrawn.message}`,
    });
    expect(status.observedGeneration).toBe(2);
  });

  it('says EndpointExclusive=False EndpointShared, naming the older Provider of its namespace, and leaves Ready as discovery found it', () => {
    const older = { ...provider, metadata: { name: 'host-old', namespace: 'vms' } } as Provider;
    const status = decideProviderStatus(provider, { ok: true, failureDomains: [{ name: 'host-a' }] }, now, older);
    expect(condition(status, 'EndpointExclusive')).toMatchObject({ status: 'False', reason: Reason.EndpointShared });
    expect((condition(status, 'EndpointExclusive') as { message: string }).message).toContain(
      'Provider vms/host-old names the same endpoint (unix://host-a/var/lib/ch)',
    );
    expect(condition(status, 'Ready')).toMatchObject({ status: 'True', reason: Reason.Reconciled });
    expect(condition(decideProviderStatus(provider, { ok: true, failureDomains: [] }, now), 'EndpointExclusive')).toMatchObject({ status: 'True' });
  });

  it('names neither the namespace nor the name of an older Provider of another namespace on its endpoint', () => {
    const older = {
      ...provider,
      spec: { ...provider.spec, connection: { endpoint: 'UNIX://host-a/var/lib/ch/' } },
      metadata: { name: 'host-a', namespace: 'ops' },
    } as Provider;
    const message = (condition(decideProviderStatus(provider, { ok: true, failureDomains: [] }, now, older), 'EndpointExclusive') as { message: string })
      .message;
    expect(message).toContain('A Provider of another namespace names the same endpoint (unix://host-a/var/lib/ch)');
    expect(message).not.toContain('ops');
    expect(message).not.toContain('UNIX://');
  });
});
