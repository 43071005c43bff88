// Where a machine's VM is, once recorded: resolveRecordedPlacement,
// describePlacementChange, and which machines hold a Provider (isOnProvider).
import { describe, expect, it } from 'vitest';
import type { Provider } from '../../../../infra/api/banlieue.io/v1alpha1/provider.js';
import { Reason } from '../../../../infra/api/conditions.js';
import type { InfraMachine } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/infra-machine.js';
import { describePlacementChange, resolveRecordedPlacement } from '../../../../controller/reconcilers/infra-machine/placement.js';
import { isOnProvider } from '../../../../controller/reconcilers/provider/machines-on-provider.js';

function provider(name: string, domains: readonly string[], backend = 'vsphere'): Provider {
  return {
    apiVersion: 'banlieue.io/v1alpha1',
    kind: 'Provider',
    metadata: { name, namespace: 'team-a' },
    spec: { providerClassRef: { name: backend }, connection: { endpoint: `https://${name}.example`, credentialsRef: { name: 'creds' } } },
    status: { failureDomains: domains.map((d) => ({ name: d, attributes: { raw: { datacenter: `${d}-now` }, availableStorageClasses: ['fast'] } })) },
  } as Provider;
}

const RECORD = { provider: 'north', failureDomain: 'fd-1', location: { datacenter: 'dc-then' } };

function machine(spec: Record<string, unknown>, status?: Record<string, unknown>): InfraMachine {
  return {
    apiVersion: 'infrastructure.banlieue.io/v1alpha1',
    kind: 'VSphereMachine',
    metadata: { name: 'm', namespace: 'team-a', finalizers: ['banlieue.io/vspheremachine'] },
    spec,
    ...(status ? { status } : {}),
  } as InfraMachine;
}

describe('a recorded placement', () => {
  it('resolves the recorded Provider and failure domain, located where the VM was created', () => {
    const placed = resolveRecordedPlacement('vsphere', 'team-a', RECORD, [provider('south', ['fd-1']), provider('north', ['fd-1', 'fd-2'])]);
    expect(placed).toMatchObject({
      ok: true,
      provider: { metadata: { name: 'north' } },
      failureDomain: { name: 'fd-1', attributes: { raw: { datacenter: 'dc-then' }, availableStorageClasses: ['fast'] } },
    });
  });

  it('still locates the VM when the Provider no longer publishes that failure domain', () => {
    const placed = resolveRecordedPlacement('vsphere', 'team-a', RECORD, [provider('north', [])]);
    expect(placed).toMatchObject({ ok: true, failureDomain: { name: 'fd-1', attributes: { raw: { datacenter: 'dc-then' } } } });
  });

  it.each([
    ['gone', [provider('south', ['fd-1'])], 'Provider north, where the VM was created (status.placement), not found in namespace team-a'],
    [
      'of another backend',
      [provider('north', ['fd-1'], 'proxmox')],
      'Provider north, where the VM was created (status.placement), is of class proxmox, this machine needs vsphere',
    ],
  ])('is ProviderNotFound when the Provider is %s', (_what, providers, message) => {
    expect(resolveRecordedPlacement('vsphere', 'team-a', RECORD, providers)).toEqual({ ok: false, reason: Reason.ProviderNotFound, message });
  });

  it.each([
    [{}, undefined],
    [{ providerName: 'north', failureDomain: 'fd-1' }, undefined],
    [{ providerName: 'south' }, 'Provider south'],
    [{ failureDomain: 'fd-2' }, 'failure domain fd-2'],
    [{ providerName: 'south', failureDomain: 'fd-2' }, 'Provider south and failure domain fd-2'],
  ])('names what differs from the record in %j: %s', (named, what) => {
    const said = describePlacementChange(RECORD, named);
    if (what === undefined) expect(said).toBeUndefined();
    else expect(said).toContain(`the machine now names ${what}, but its VM was created on north/fd-1`);
  });
});

describe('a Provider in use', () => {
  const north = provider('north', ['fd-1']);
  const south = provider('south', ['fd-2']);
  const all = [north, south];

  it.each([
    ['its VM was created there', machine({ providerRef: { name: 'south' } }, { placement: RECORD }), true],
    [
      'its VM was created elsewhere, whatever its spec names',
      machine({ providerRef: { name: 'north' } }, { placement: { ...RECORD, provider: 'south' } }),
      false,
    ],
    ['it names the Provider (it may be about to create there)', machine({ providerRef: { name: 'north' } }), true],
    ['it names another Provider', machine({ providerRef: { name: 'south' } }), false],
    [
      'provisioned by a version that kept no record, in a failure domain of the Provider',
      machine({ failureDomain: 'fd-1' }, { initialization: { provisioned: true } }),
      true,
    ],
    ['it names a failure domain of the Provider but created nothing', machine({ failureDomain: 'fd-1' }), false],
  ])('is held by a machine when %s: %s', (_what, m, held) => {
    expect(isOnProvider(m, north, 'vsphere', all)).toBe(held);
  });
});
