import { describe, expect, it } from 'vitest';
import { containsAll } from '../../../controller/runtime/status-writer.js';

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
