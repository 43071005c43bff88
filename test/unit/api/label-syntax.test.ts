// Label selectors as kubectl's -l writes them, parsed as apimachinery's labels.Parse does.
import { describe, expect, it } from 'vitest';
import { parseSelector } from '../../../infra/api/label-syntax.js';
import type { LabelSelector } from '../../../infra/api/meta.js';
import { formatSelector, matchesSelector } from '../../../controller/scheduler/label-selector.js';

const labels = { region: 'eu', tier: 'gold', datacenter: 'dc1' };

describe('Label selector syntax', () => {
  it.each<[string, LabelSelector]>([
    ['', {}],
    ['shard=a', { matchLabels: { shard: 'a' } }],
    ['shard==a', { matchLabels: { shard: 'a' } }],
    [' shard = a , region!=us ', { matchLabels: { shard: 'a' }, matchExpressions: [{ key: 'region', operator: 'NotIn', values: ['us'] }] }],
    [
      'banlieue.io/shard in (a, b),tier notin (bronze)',
      {
        matchExpressions: [
          { key: 'banlieue.io/shard', operator: 'In', values: ['a', 'b'] },
          { key: 'tier', operator: 'NotIn', values: ['bronze'] },
        ],
      },
    ],
    [
      'datacenter,!legacy',
      {
        matchExpressions: [
          { key: 'datacenter', operator: 'Exists' },
          { key: 'legacy', operator: 'DoesNotExist' },
        ],
      },
    ],
    ['shard=a,shard=b', { matchLabels: { shard: 'a' }, matchExpressions: [{ key: 'shard', operator: 'In', values: ['b'] }] }],
    ['empty=', { matchLabels: { empty: '' } }],
  ])('parses %j as kubectl -l does', (text, expected) => {
    expect(parseSelector(text)).toEqual(expected);
  });

  it('parses what it renders back to the same selector', () => {
    const text = 'app=web,zone in (a,b),tier notin (bronze),datacenter,!legacy';
    expect(formatSelector(parseSelector(text))).toBe(text);
  });

  it.each<[string, string]>([
    ['shard=a,', 'expected a label key at character 9'],
    ['shard in a', 'expected "(" at character 10'],
    ['shard in (a', 'expected ")" at character 12'],
    ['shard > 3', 'expected =, ==, !=, in or notin at character 7'],
    ['shard has (a)', 'after "shard": expected =, ==, !=, in or notin, got "has"'],
    ['-shard=a', '"-shard" is not a label key'],
    ['Bad_Prefix/shard=a', '"Bad_Prefix/shard" is not a label key'],
    ['shard=-a', '"-a" is not a label value'],
    ['!shard=a', 'expected "," at character 7'],
  ])('refuses %j, saying where', (text, message) => {
    expect(() => parseSelector(text)).toThrow(message);
  });

  it('matches what a parsed selector selects', () => {
    const selector = parseSelector('region in (eu,us),tier!=bronze,!legacy');
    expect(matchesSelector(labels, selector)).toBe(true);
    expect(matchesSelector({ ...labels, legacy: 'yes' }, selector)).toBe(false);
  });
});
