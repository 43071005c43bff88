import { describe, expect, it } from 'vitest';
import { applyStatusOrRefusal, containsAll } from '../../../controller/runtime/status-writer.js';
import { ApiStatusError } from '../../../controller/runtime/kube-api.js';
import type { ServerSideApply } from '../../../controller/runtime/server-side-apply.js';

describe('containsAll (is the desired status already there?)', () => {
  it.each([
    [{ a: 1, b: { c: 'x' } }, { a: 1 }, true],
    [{ a: 1 }, { a: 2 }, false],
    [{ a: [{ t: 1, x: 2 }] }, { a: [{ t: 1 }] }, true],
    [{ a: [{ t: 1 }, { t: 2 }] }, { a: [{ t: 1 }] }, false],
    [{ a: undefined }, { a: { b: 1 } }, false],
    [undefined, { a: 1 }, false],
    [{ a: 1 }, {}, true],
  ])('containsAll(%j, %j) is %s', (current, desired, expected) => {
    expect(containsAll(current, desired)).toBe(expected);
  });
});

describe('applyStatusOrRefusal', () => {
  const obj = { apiVersion: 'banlieue.io/v1alpha1', kind: 'Provider', metadata: { name: 'p', namespace: 'vms' } };
  /** An SSA that refuses, as the API server does, any status with more than two items. */
  const ssa = (applied: unknown[]) =>
    ({
      apply: async (o: { status: { items?: unknown[] } }) => {
        if ((o.status.items?.length ?? 0) > 2)
          throw new ApiStatusError(422, JSON.stringify({ message: 'status.items: Too many: 3: must have at most 2 items' }), 'PATCH x');
        applied.push(o.status);
      },
    }) as unknown as ServerSideApply;

  it('applies the status decided when the API server takes it', async () => {
    const applied: unknown[] = [];
    const result = await applyStatusOrRefusal<{ items?: number[]; refused?: string }>(ssa(applied), obj, { items: [1] }, (m) => ({ refused: m }));
    expect(result).toEqual({ written: true, status: { items: [1] } });
    expect(applied).toEqual([{ items: [1] }]);
  });

  it("applies what `refused` makes of the API server's words when it refuses the status as invalid", async () => {
    const applied: unknown[] = [];
    const result = await applyStatusOrRefusal<{ items?: number[]; refused?: string }>(ssa(applied), obj, { items: [1, 2, 3] }, (m) => ({ refused: m }));
    expect(result).toEqual({
      written: true,
      status: { refused: 'status.items: Too many: 3: must have at most 2 items' },
      refusal: 'status.items: Too many: 3: must have at most 2 items',
    });
    expect(applied).toEqual([{ refused: 'status.items: Too many: 3: must have at most 2 items' }]);
  });
});
