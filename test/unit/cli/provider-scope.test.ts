// A role scoped to one Provider (a Cloud Hypervisor host's own): which Providers and machines it serves.
import { describe, expect, it } from 'vitest';
import type { Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import { servesMachine, servesProvider, type ScopedMachine } from '../../../controller/cli/provider-scope.js';

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
    expect(servesProvider('host-a', provider('host-a'))).toBe(true);
    expect(servesProvider('host-a', provider('host-b'))).toBe(false);
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
    expect(servesMachine(scope, 'cloud-hypervisor', m, hosts, byMachine)).toBe(serves);
  });

  it('serves every machine without a scope', () => {
    expect(servesMachine(undefined, 'cloud-hypervisor', machine({ providerRef: { name: 'host-b' } }), hosts)).toBe(true);
  });
});
