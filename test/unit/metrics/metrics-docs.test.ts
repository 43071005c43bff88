// docs/metrics.md documents every metric the roles register (the definitions they
// register from: test/unit/runtime/metrics.test.ts), with its type and labels, and
// no metric that is not there.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { METRICS } from '../../../infra/metrics/definitions.js';

/** The rows of the metrics table: name, type, labels. */
const documented = readFileSync('docs/metrics.md', 'utf8')
  .split('\n')
  .flatMap((line) => {
    const row = /^\| `([a-z_:]+)` \| (\w+) \| ([^|]*) \|/.exec(line);
    if (!row) return [];
    const [, name = '', type = '', labels = ''] = row;
    return [{ name, type, labelNames: [...labels.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]) }];
  });

describe('docs/metrics.md', () => {
  it.each(Object.values(METRICS))('documents $name with its type and labels', ({ name, type, labelNames }) => {
    expect(documented.find((row) => row.name === name)).toEqual({ name, type, labelNames });
  });

  it('documents no metric the roles do not register', () => {
    expect(documented.map((row) => row.name).sort()).toEqual(
      Object.values(METRICS)
        .map((m) => m.name)
        .sort(),
    );
  });
});
