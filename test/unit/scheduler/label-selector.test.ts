import { describe, expect, it } from 'vitest';
import type { LabelSelector } from '../../../infra/api/meta.js';
import { formatSelector, labelValue, matchesSelector } from '../../../controller/scheduler/label-selector.js';

const labels = { region: 'eu', tier: 'gold', datacenter: 'dc1' };

describe('Label selectors', () => {
  it.each<[string, Record<string, string> | undefined, LabelSelector | undefined, boolean]>([
    ['an undefined selector matches any labels', labels, undefined, true],
    ['an empty selector matches any labels', labels, {}, true],
    ['an empty selector matches an object without labels', undefined, {}, true],
    ['matchLabels matches when every pair is present', labels, { matchLabels: { region: 'eu', tier: 'gold' } }, true],
    ['matchLabels fails when one value differs', labels, { matchLabels: { region: 'eu', tier: 'silver' } }, false],
    ['matchLabels fails when the key is absent', labels, { matchLabels: { zone: 'a' } }, false],
    ['In matches a listed value', labels, { matchExpressions: [{ key: 'region', operator: 'In', values: ['us', 'eu'] }] }, true],
    ['In fails on an unlisted value', labels, { matchExpressions: [{ key: 'region', operator: 'In', values: ['us'] }] }, false],
    ['In fails when the key is absent', labels, { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }, false],
    ['NotIn fails on a listed value', labels, { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['gold'] }] }, false],
    ['NotIn matches an unlisted value', labels, { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['bronze'] }] }, true],
    ['NotIn matches when the key is absent', labels, { matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] }, true],
    ['Exists matches a present key', labels, { matchExpressions: [{ key: 'datacenter', operator: 'Exists' }] }, true],
    ['Exists fails on an absent key', labels, { matchExpressions: [{ key: 'zone', operator: 'Exists' }] }, false],
    ['DoesNotExist matches an absent key', labels, { matchExpressions: [{ key: 'zone', operator: 'DoesNotExist' }] }, true],
    ['DoesNotExist fails on a present key', labels, { matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }] }, false],
    ['DoesNotExist matches an object without labels', undefined, { matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }] }, true],
    [
      'matchLabels and matchExpressions must both hold',
      labels,
      { matchLabels: { region: 'eu' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['silver'] }] },
      false,
    ],
    [
      'every expression must hold',
      labels,
      {
        matchExpressions: [
          { key: 'region', operator: 'In', values: ['eu'] },
          { key: 'legacy', operator: 'DoesNotExist' },
        ],
      },
      true,
    ],
    ['an inherited property is not a label', {}, { matchExpressions: [{ key: 'constructor', operator: 'Exists' }] }, false],
  ])('%s', (_, objectLabels, selector, expected) => {
    expect(matchesSelector(objectLabels, selector)).toBe(expected);
  });

  it.each<[string, string | undefined]>([
    ['region', 'eu'],
    ['zone', undefined],
    ['toString', undefined],
  ])('reads label %s as %s', (key, expected) => {
    expect(labelValue(labels, key)).toBe(expected);
  });

  it.each<[LabelSelector | undefined, string]>([
    [undefined, '{}'],
    [{}, '{}'],
    [{ matchLabels: { tier: 'gold', app: 'web' } }, 'app=web,tier=gold'],
    [
      {
        matchLabels: { app: 'web' },
        matchExpressions: [
          { key: 'zone', operator: 'In', values: ['a', 'b'] },
          { key: 'tier', operator: 'NotIn', values: ['bronze'] },
          { key: 'datacenter', operator: 'Exists' },
          { key: 'legacy', operator: 'DoesNotExist' },
        ],
      },
      'app=web,zone in (a,b),tier notin (bronze),datacenter,!legacy',
    ],
  ])('renders %j as %s, like kubectl', (selector, expected) => {
    expect(formatSelector(selector)).toBe(expected);
  });
});
