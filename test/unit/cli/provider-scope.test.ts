// A role scoped to one Provider (a Cloud Hypervisor host's own) or to a shard of Providers by label selector:
// which Providers and machines it serves.
import { describe, expect, it } from 'vitest';
import type { Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import { servesMachine, servesProvider, type ProviderScope, type ScopedMachine } from '../../../controller/cli/provider-scope.js';
import { parseSelector } from '../../../infra/api/label-syntax.js';

const provider = (name: string, domains: string[] = [name], backend = 'cloud-hypervisor'): Provider =>
  ({
    apiVersion: 'banlieue.io/v1alpha1',
    kind: 'Provider',
    metadata: { name, namespace: 'vms' },
    spec: { providerClassRef: { name: backend }, connection: { endpoint: `unix://${name}/var/lib/ch` } },
    status: { failureDomains: domains.map((d) => ({ name: d })) },
  }) as Provider;
const machine = (spec: ScopedMachine['spec']): ScopedMachine => ({ metadata: { namespace: 'vms' }, spec });
const hosts = [provider('host-b'), provider('host-a'), provider('vc', ['vc-1'], 'vsphere')];

describe('provider scope', () => {
  it('serves every Provider without a scope, and only its own with one', () => {
    expect(servesProvider(undefined, provider('host-b'))).toBe(true);
    expect(servesProvider({ name: 'host-a' }, provider('host-a'))).toBe(true);
    expect(servesProvider({ name: 'host-a' }, provider('host-b'))).toBe(false);
  });

  it.each([
    ['its spec.providerRef names the scope', machine({ providerRef: { name: 'host-a' } }), undefined, 'host-a', true],
    ['its spec.providerRef names another host', machine({ providerRef: { name: 'host-b' } }), undefined, 'host-a', false],
    ['another host publishes its spec.failureDomain', machine({ failureDomain: 'host-b' }), undefined, 'host-a', false],
    ['the scope publishes its spec.failureDomain', machine({ failureDomain: 'host-b' }), undefined, 'host-b', true],
    ["the scope publishes its CAPI Machine's failure domain", machine({}), 'host-b', 'host-b', true],
    ['no Provider takes it: the first Provider by name reports it', machine({ failureDomain: 'gone' }), undefined, 'host-a', true],
    ['no Provider takes it: the others leave it', machine({ failureDomain: 'gone' }), undefined, 'host-b', false],
  ])('a machine when %s', (_why, m, byMachine, scope, serves) => {
    expect(servesMachine({ name: scope }, 'cloud-hypervisor', m, hosts, byMachine)).toBe(serves);
  });

  it('serves every machine without a scope', () => {
    expect(servesMachine(undefined, 'cloud-hypervisor', machine({ providerRef: { name: 'host-b' } }), hosts)).toBe(true);
  });

  describe('by shard', () => {
    const shardA: ProviderScope = { selector: parseSelector('shard=a'), shard: 'lease-a' };
    const shardB: ProviderScope = { selector: parseSelector('shard=b'), shard: 'lease-b' };
    const vc = (name: string, shard: string, claim?: string): Provider => {
      const p = provider(name, [`${name}-dc`], 'vsphere');
      return { ...p, metadata: { ...p.metadata, labels: { shard }, ...(claim ? { annotations: { 'banlieue.io/provider-shard': claim } } : {}) } };
    };

    it.each<[string, Provider, boolean, boolean]>([
      ['selected by A and claimed by A', vc('vc1', 'a', 'lease-a'), true, false],
      ['selected by A, not claimed yet', vc('vc1', 'a'), false, false],
      ['relabelled to B, A still holding the claim', vc('vc1', 'b', 'lease-a'), false, false],
      ['relabelled to B and claimed by B', vc('vc1', 'b', 'lease-b'), false, true],
    ])('a Provider %s: A serves it %s, B %s', (_why, p, byA, byB) => {
      expect(servesProvider(shardA, p)).toBe(byA);
      expect(servesProvider(shardB, p)).toBe(byB);
    });

    it.each<[string, ScopedMachine, Provider[], boolean, boolean]>([
      [
        'placed on a Provider of A',
        { metadata: { namespace: 'vms' }, spec: {}, status: { placement: { provider: 'vc1' } } },
        [vc('vc1', 'a', 'lease-a'), vc('vc2', 'b', 'lease-b')],
        true,
        false,
      ],
      [
        'placed on vc1 though its spec.providerRef names vc2',
        { metadata: { namespace: 'vms' }, spec: { providerRef: { name: 'vc2' } }, status: { placement: { provider: 'vc1' } } },
        [vc('vc1', 'a', 'lease-a'), vc('vc2', 'b', 'lease-b')],
        true,
        false,
      ],
      [
        'resolved by its failure domain to a Provider of B',
        { metadata: { namespace: 'vms' }, spec: { failureDomain: 'vc2-dc' } },
        [vc('vc1', 'a', 'lease-a'), vc('vc2', 'b', 'lease-b')],
        false,
        true,
      ],
      [
        'on a Provider moving from A to B, before B claims it',
        { metadata: { namespace: 'vms' }, spec: { providerRef: { name: 'vc1' } } },
        [vc('vc1', 'b', 'lease-a')],
        false,
        false,
      ],
      [
        'placed on a Provider that is gone: the first Provider by name decides',
        { metadata: { namespace: 'vms' }, spec: {}, status: { placement: { provider: 'gone' } } },
        [vc('vc2', 'b', 'lease-b'), vc('vc3', 'a', 'lease-a')],
        false,
        true,
      ],
    ])('a machine %s', (_why, m, providers, byA, byB) => {
      expect(servesMachine(shardA, 'vsphere', m, providers)).toBe(byA);
      expect(servesMachine(shardB, 'vsphere', m, providers)).toBe(byB);
    });
  });
});
