// Writes not yet shown by the cache stand for the object until it shows them.
import { describe, expect, it } from 'vitest';
import { Expectations, someFieldsOf, wholeStatus } from '../../../controller/runtime/expectations.js';
import { finalizerPart } from '../../../controller/runtime/finalizers.js';

interface Obj {
  metadata: { uid?: string };
  status?: Record<string, unknown>;
}

const obj = (uid: string, status?: Record<string, unknown>): Obj => ({ metadata: { uid }, ...(status ? { status } : {}) });

describe('expectations', () => {
  it('overlays expected fields on the cached status until the cache shows them, then forgets them', () => {
    const e = new Expectations(someFieldsOf<'status', Record<string, unknown>>('status'));
    e.expect('ns/a', obj('u1', { other: 1 }), { scheduled: 'fd-1' });
    expect(e.observe('ns/a', obj('u1', { other: 1 })).status).toEqual({ other: 1, scheduled: 'fd-1' });
    expect(e.observe('ns/a', obj('u1', { other: 2, scheduled: 'fd-1' })).status).toEqual({ other: 2, scheduled: 'fd-1' });
    // Shown once, forgotten: a later cached value stands.
    expect(e.observe('ns/a', obj('u1', { scheduled: 'fd-2' })).status).toEqual({ scheduled: 'fd-2' });
  });

  it('replaces the whole status of a writer that owns it all, what it left out included', () => {
    const e = new Expectations(wholeStatus<Record<string, unknown>>());
    e.expect('ns/a', obj('u1', { taskRef: 'task-1' }), { provisioned: true });
    expect(e.observe('ns/a', obj('u1', { taskRef: 'task-1' })).status).toEqual({ provisioned: true });
    // A status that holds the fields and more is not yet the one written.
    expect(e.observe('ns/a', obj('u1', { taskRef: 'task-1', provisioned: true })).status).toEqual({ provisioned: true });
    expect(e.observe('ns/a', obj('u1', { provisioned: true })).status).toEqual({ provisioned: true });
  });

  it('expects nothing of a cache that already shows the fields, nor of another object of the same name', () => {
    const e = new Expectations(someFieldsOf<'status', Record<string, unknown>>('status'));
    e.expect('ns/a', obj('u1', { scheduled: 'fd-1' }), { scheduled: 'fd-1' });
    expect(e.observe('ns/a', obj('u1', {})).status).toEqual({});
    e.expect('ns/a', obj('u1'), { scheduled: 'fd-1' });
    expect(e.observe('ns/a', obj('u2')).status).toBeUndefined();
  });

  it('forgets what the caller says was not written', () => {
    const e = new Expectations(someFieldsOf<'status', Record<string, unknown>>('status'));
    e.expect('ns/a', obj('u1'), { scheduled: 'fd-1' });
    e.forget('ns/a');
    expect(e.observe('ns/a', obj('u1')).status).toBeUndefined();
  });

  it('overlays spec fields the same way, and tells whether anything written is still to be shown', () => {
    const e = new Expectations(someFieldsOf<'spec', { failureDomain: string }>('spec'));
    const machine = (uid: string, spec: Record<string, unknown>) => ({ metadata: { uid }, spec });
    e.expect('ns/m', machine('u1', { providerRef: { name: 'p' } }), { failureDomain: 'fd-1' });
    expect(e.awaits('ns/m', machine('u1', { providerRef: { name: 'p' } }))).toBe(true);
    expect(e.observe('ns/m', machine('u1', { providerRef: { name: 'p' } })).spec).toEqual({ providerRef: { name: 'p' }, failureDomain: 'fd-1' });
    expect(e.awaits('ns/m', machine('u1', { failureDomain: 'fd-1' }))).toBe(false);
    expect([...e.keys()]).toEqual([]);
  });

  it('shows a finalizer write (and its stamp) until the cache has both, and no longer than its bound', () => {
    let now = 0;
    const e = new Expectations(finalizerPart('f'), { maxAgeMs: 1000, now: () => now });
    const machine = (finalizers: string[] | undefined, providerID?: string) => ({
      apiVersion: 'x/v1',
      kind: 'M',
      metadata: { uid: 'u1', ...(finalizers ? { finalizers } : {}) },
      spec: { ...(providerID ? { providerID } : {}) },
    });
    e.expect('ns/m', machine(undefined), { stamp: { path: ['spec', 'providerID'], value: 'p://1' } });
    expect(e.observe('ns/m', machine(['other']))).toEqual(machine(['other', 'f'], 'p://1'));
    // The finalizer alone is not the whole write.
    expect(e.awaits('ns/m', machine(['f']))).toBe(true);
    now = 999;
    expect(e.awaits('ns/m', machine(['f']))).toBe(true);
    now = 1000;
    expect(e.awaits('ns/m', machine(['f']))).toBe(false);
    e.expect('ns/m', machine(undefined), {});
    expect(e.awaits('ns/m', machine(['f']))).toBe(false);
  });
});
