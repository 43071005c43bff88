// Writes not yet shown by the cache stand for the object until it shows them.
import { describe, expect, it } from 'vitest';
import { Expectations } from '../../../controller/runtime/expectations.js';

interface Obj {
  metadata: { uid?: string };
  status?: Record<string, unknown>;
}

const obj = (uid: string, status?: Record<string, unknown>): Obj => ({ metadata: { uid }, ...(status ? { status } : {}) });

describe('expectations', () => {
  it('overlays expected fields on the cached status until the cache shows them, then forgets them', () => {
    const e = new Expectations<Record<string, unknown>>('fields');
    e.expect('ns/a', obj('u1', { other: 1 }), { scheduled: 'fd-1' });
    expect(e.observe('ns/a', obj('u1', { other: 1 })).status).toEqual({ other: 1, scheduled: 'fd-1' });
    expect(e.observe('ns/a', obj('u1', { other: 2, scheduled: 'fd-1' })).status).toEqual({ other: 2, scheduled: 'fd-1' });
    // Shown once, forgotten: a later cached value stands.
    expect(e.observe('ns/a', obj('u1', { scheduled: 'fd-2' })).status).toEqual({ scheduled: 'fd-2' });
  });

  it('replaces the whole status of a writer that owns it all, what it left out included', () => {
    const e = new Expectations<Record<string, unknown>>('whole');
    e.expect('ns/a', obj('u1', { taskRef: 'task-1' }), { provisioned: true });
    expect(e.observe('ns/a', obj('u1', { taskRef: 'task-1' })).status).toEqual({ provisioned: true });
    // A status that holds the fields and more is not yet the one written.
    expect(e.observe('ns/a', obj('u1', { taskRef: 'task-1', provisioned: true })).status).toEqual({ provisioned: true });
    expect(e.observe('ns/a', obj('u1', { provisioned: true })).status).toEqual({ provisioned: true });
  });

  it('expects nothing of a cache that already shows the fields, nor of another object of the same name', () => {
    const e = new Expectations<Record<string, unknown>>('fields');
    e.expect('ns/a', obj('u1', { scheduled: 'fd-1' }), { scheduled: 'fd-1' });
    expect(e.observe('ns/a', obj('u1', {})).status).toEqual({});
    e.expect('ns/a', obj('u1'), { scheduled: 'fd-1' });
    expect(e.observe('ns/a', obj('u2')).status).toBeUndefined();
  });

  it('forgets what the caller says was not written', () => {
    const e = new Expectations<Record<string, unknown>>('fields');
    e.expect('ns/a', obj('u1'), { scheduled: 'fd-1' });
    e.forget('ns/a');
    expect(e.observe('ns/a', obj('u1')).status).toBeUndefined();
  });
});
