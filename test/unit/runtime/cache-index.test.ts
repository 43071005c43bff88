import { describe, expect, it } from 'vitest';
import { CacheIndex } from '../../../controller/runtime/cache-index.js';

interface Vm {
  name: string;
  namespace?: string;
  image?: string;
  disks?: string[];
}

/** A store indexed by namespace and by disk, as the informer's is. */
function store(...vms: Vm[]): CacheIndex<Vm> {
  const s = new CacheIndex<Vm>();
  s.addIndex('namespace', (vm) => (vm.namespace ? [vm.namespace] : []));
  s.addIndex('disk', (vm) => vm.disks ?? []);
  for (const vm of vms) s.set(vm.name, vm);
  return s;
}

const names = (vms: Vm[]): string[] => vms.map((v) => v.name).sort();

describe('CacheIndex', () => {
  it('finds objects by an index value', () => {
    const s = store({ name: 'a', namespace: 'x' }, { name: 'b', namespace: 'y' }, { name: 'c', namespace: 'x' });
    expect(names(s.byIndex('namespace', 'x'))).toEqual(['a', 'c']);
    expect(names(s.byIndex('namespace', 'y'))).toEqual(['b']);
    expect(s.byIndex('namespace', 'z')).toEqual([]);
  });

  it('files an object under every value its function returns, once each', () => {
    const s = store({ name: 'a', disks: ['d1', 'd2', 'd1'] }, { name: 'b', disks: ['d2'] });
    expect(names(s.byIndex('disk', 'd1'))).toEqual(['a']);
    expect(names(s.byIndex('disk', 'd2'))).toEqual(['a', 'b']);
  });

  it('leaves an object out of an index its function returns nothing for', () => {
    const s = store({ name: 'cluster-scoped' });
    expect(s.get('cluster-scoped')).toEqual({ name: 'cluster-scoped' });
    expect(s.byIndex('namespace', '')).toEqual([]);
  });

  it('moves a replaced object to its new values and returns the old one', () => {
    const s = store({ name: 'a', namespace: 'x', disks: ['d1'] });
    const old = s.set('a', { name: 'a', namespace: 'y', disks: ['d2'] });
    expect(old).toEqual({ name: 'a', namespace: 'x', disks: ['d1'] });
    expect(s.byIndex('namespace', 'x')).toEqual([]);
    expect(s.byIndex('disk', 'd1')).toEqual([]);
    expect(s.byIndex('namespace', 'y')).toEqual([{ name: 'a', namespace: 'y', disks: ['d2'] }]);
    expect(s.size).toBe(1);
  });

  it('keeps an updated object in its place when its index values did not change', () => {
    const s = store({ name: 'a', namespace: 'x' }, { name: 'b', namespace: 'x' });
    s.set('a', { name: 'a', namespace: 'x', image: 'new' });
    expect(s.byIndex('namespace', 'x').map((v) => v.name)).toEqual(['a', 'b']);
    expect(s.get('a')?.image).toBe('new');
  });

  it('drops a deleted object from every index and returns it', () => {
    const s = store({ name: 'a', namespace: 'x', disks: ['d1'] }, { name: 'b', namespace: 'x' });
    expect(s.delete('a')?.name).toBe('a');
    expect(s.delete('a')).toBeUndefined();
    expect(names(s.byIndex('namespace', 'x'))).toEqual(['b']);
    expect(s.byIndex('disk', 'd1')).toEqual([]);
    expect(names(s.values())).toEqual(['b']);
  });

  it('indexes objects already stored when an index is added later', () => {
    const s = store({ name: 'a', image: 'ubuntu' }, { name: 'b', image: 'debian' });
    s.addIndex('image', (vm) => (vm.image ? [vm.image] : []));
    expect(names(s.byIndex('image', 'ubuntu'))).toEqual(['a']);
    s.set('c', { name: 'c', image: 'ubuntu' });
    expect(names(s.byIndex('image', 'ubuntu'))).toEqual(['a', 'c']);
  });

  it('refuses a second index of the same name', () => {
    expect(() => store().addIndex('namespace', () => [])).toThrow('index "namespace" already exists');
  });

  it('names the known indexes when asked for an unknown one', () => {
    expect(() => store().byIndex('class', 'large')).toThrow('no index "class" (known: namespace, disk)');
  });
});
