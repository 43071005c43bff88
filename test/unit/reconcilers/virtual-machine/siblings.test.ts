// The siblings a VM's decision reads come from indexes of the VM cache, kept
// right as VMs are added, updated and deleted: those placed and not
// provisioned yet, those holding or claiming one of the VM's static
// addresses, those this process placed that the cache does not show yet, and
// every VM of the namespace only for a VM with anti-affinity or spread.
import { describe, expect, it } from 'vitest';
import type { VirtualMachine } from '../../../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import { CacheIndex } from '../../../../controller/runtime/cache-index.js';
import { keyOf, NAMESPACE_INDEX } from '../../../../controller/runtime/informer.js';
import {
  BY_STATIC_ADDRESS,
  PLACED_NOT_PROVISIONED,
  placedNotProvisioned,
  siblingsRead,
  staticAddresses,
  type SiblingCache,
} from '../../../../controller/reconcilers/virtual-machine/siblings.js';
import { aVm } from './fixtures.js';

const NOW = '2026-12-03T03:00:00Z';
const placed = { providerName: 'p0', providerClass: 'libvirt' as const, failureDomain: 'p0-fd0', scheduledAt: NOW };

function named(name: string, status?: VirtualMachine['status'], spec: Partial<VirtualMachine['spec']> = {}, namespace = 'team-a'): VirtualMachine {
  const vm = aVm(spec, { name, namespace, uid: `uid-${name}` });
  return status ? { ...vm, status } : vm;
}

const withAddress = (address: string): Partial<VirtualMachine['spec']> => ({ networkOverrides: [{ name: 'eth0', static: { address, prefix: 24 } }] });

/** A VM cache indexed as the controller's is, and the informer's view of it. */
function cacheOf(...vms: VirtualMachine[]): { store: CacheIndex<VirtualMachine>; cache: SiblingCache } {
  const store = new CacheIndex<VirtualMachine>();
  store.addIndex(NAMESPACE_INDEX, (vm) => [vm.metadata.namespace ?? '']);
  store.addIndex(PLACED_NOT_PROVISIONED, placedNotProvisioned);
  store.addIndex(BY_STATIC_ADDRESS, staticAddresses);
  for (const vm of vms) store.set(keyOf(vm), vm);
  const cache: SiblingCache = {
    get: (key) => store.get(key),
    list: (ns) => (ns === undefined ? store.values() : store.byIndex(NAMESPACE_INDEX, ns)),
    byIndex: (name, value) => store.byIndex(name, value),
  };
  return { store, cache };
}

const names = (vms: readonly VirtualMachine[]): string[] => vms.map((vm) => vm.metadata.name ?? '').sort();

describe('the siblings a VirtualMachine decision reads', () => {
  it('files a VM as placed and not provisioned while it is, and takes it out when it is provisioned, deleted or goes', () => {
    const { store } = cacheOf(named('a'));
    const pending = (): string[] => names(store.byIndex(PLACED_NOT_PROVISIONED, 'team-a'));
    expect(pending()).toEqual([]);
    store.set('team-a/a', named('a', { scheduled: placed }));
    expect(pending()).toEqual(['a']);
    store.set('team-a/a', named('a', { scheduled: placed, initialization: { provisioned: true } }));
    expect(pending()).toEqual([]);
    store.set('team-a/a', named('a', { scheduled: placed }));
    store.set('team-a/b', { ...named('b', { scheduled: placed }), metadata: { name: 'b', namespace: 'team-a', deletionTimestamp: NOW } });
    expect(pending()).toEqual(['a']);
    store.delete('team-a/a');
    expect(pending()).toEqual([]);
  });

  it('files a VM under each static address it claims or holds, in canonical form, and moves it when they change', () => {
    const { store } = cacheOf(named('a', undefined, withAddress('2001:DB8:0::10')));
    const at = (address: string): string[] => names(store.byIndex(BY_STATIC_ADDRESS, `team-a/${address}`));
    expect(at('2001:db8::10')).toEqual(['a']);
    store.set('team-a/a', named('a', { heldAddresses: [{ interface: 'eth0', networkClass: 'prod', address: '10.0.0.7' }] }, withAddress('10.0.0.8')));
    expect([at('2001:db8::10'), at('10.0.0.7'), at('10.0.0.8')]).toEqual([[], ['a'], ['a']]);
    store.delete('team-a/a');
    expect([at('10.0.0.7'), at('10.0.0.8')]).toEqual([[], []]);
  });

  it('reads the siblings placed and not provisioned, those this process placed, and those sharing an address; not the others, nor itself', () => {
    const { cache } = cacheOf(
      named('me', { scheduled: placed }, withAddress('10.0.0.10')),
      named('pending', { scheduled: placed }),
      named('provisioned', { scheduled: placed, initialization: { provisioned: true } }),
      named('just-placed'),
      named('same-address', { scheduled: placed, initialization: { provisioned: true } }, withAddress('10.0.0.10')),
      named('other-address', undefined, withAddress('10.0.0.11')),
      named('unplaced'),
      named('elsewhere', { scheduled: placed }, {}, 'team-b'),
    );
    const me = cache.get('team-a/me') as VirtualMachine;
    const read = siblingsRead(cache, { vm: me, addresses: ['10.0.0.10'], assumed: ['team-a/just-placed', 'team-b/elsewhere', 'team-a/me'] });
    expect(names(read)).toEqual(['just-placed', 'pending', 'same-address']);
  });

  it('reads every other VM of the namespace for a VM with anti-affinity or topology spread', () => {
    const selector = { matchLabels: { app: 'web' } };
    const { cache } = cacheOf(named('a'), named('b', { scheduled: placed, initialization: { provisioned: true } }), named('c', undefined, {}, 'team-b'));
    for (const placement of [
      { antiAffinity: [{ mode: 'required' as const, labelSelector: selector, topologyKey: 'name' }] },
      { topologySpread: [{ labelSelector: selector, topologyKey: 'name', maxSkew: 1 }] },
    ]) {
      const me = named('me', undefined, { placement });
      expect(names(siblingsRead(cache, { vm: me, addresses: [], assumed: [] }))).toEqual(['a', 'b']);
    }
  });
});
