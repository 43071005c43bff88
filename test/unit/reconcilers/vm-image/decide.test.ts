import { describe, expect, it } from 'vitest';
import type { PerProviderImageStatus, VMImage } from '../../../../infra/api/banlieue.io/v1alpha1/vm-image.js';
import type { Condition } from '../../../../infra/api/meta.js';
import { ConditionType, Reason } from '../../../../infra/api/conditions.js';
import { findCondition } from '../../../../controller/runtime/conditions.js';
import { MAX_LISTED_PROVIDERS, decideVMImageConditions } from '../../../../controller/reconcilers/vm-image/decide.js';

const T0 = new Date('2025-01-01T00:00:00.000Z');
const T1 = new Date('2025-01-01T00:05:00.000Z');

function row(providerName: string, ready: boolean, reason?: string, providerNamespace = 'team-a'): PerProviderImageStatus {
  return { providerNamespace, providerName, ready, ...(reason ? { reason } : {}) };
}

function image(perProvider?: PerProviderImageStatus[], conditions?: Condition[]): VMImage {
  return {
    apiVersion: 'banlieue.io/v1alpha1',
    kind: 'VMImage',
    metadata: { name: 'ubuntu-2404', generation: 2 },
    spec: {
      osFamily: 'linux',
      osDistribution: 'ubuntu',
      osVersion: '24.04',
      architecture: 'amd64',
      sources: [{ providerClass: 'libvirt', kind: 'BackingFile', ref: 'ubuntu-24.04.qcow2' }],
    },
    status: { ...(perProvider ? { perProvider } : {}), ...(conditions ? { conditions } : {}) },
  };
}

const conditionsOf = (conditions: Condition[]) => ({
  ready: findCondition(conditions, ConditionType.Ready),
  imageReady: findCondition(conditions, ConditionType.ImageReady),
});

describe('VMImage conditions', () => {
  it('marks Ready and ImageReady True with Reconciled when every Provider row is ready', () => {
    const { ready, imageReady } = conditionsOf(decideVMImageConditions(image([row('east', true), row('west', true)]), T0));
    expect(ready).toEqual({
      type: ConditionType.Ready,
      status: 'True',
      reason: Reason.Reconciled,
      message: 'Image ready on 2 Providers',
      lastTransitionTime: '2025-01-01T00:00:00Z',
      observedGeneration: 2,
    });
    expect(imageReady).toEqual({ ...ready, type: ConditionType.ImageReady });
  });

  it('marks Ready False with ImageNotReadyOnProvider naming the Provider that is not ready', () => {
    const conditions = decideVMImageConditions(image([row('west', true), row('east', false, 'TemplateNotFound', 'team-b'), row('north', true)]), T0);
    const { ready, imageReady } = conditionsOf(conditions);
    expect(ready).toMatchObject({
      status: 'False',
      reason: Reason.ImageNotReadyOnProvider,
      message: 'Image not ready on 1 of 3 Providers: team-b/east: TemplateNotFound',
    });
    expect(imageReady).toMatchObject({ status: 'False', reason: Reason.ImageNotReadyOnProvider, message: ready?.message });
  });

  it('marks Ready False with NoProviderRows when no Provider has reported', () => {
    for (const rows of [undefined, []]) {
      const { ready, imageReady } = conditionsOf(decideVMImageConditions(image(rows), T0));
      expect(ready).toMatchObject({ status: 'False', reason: Reason.NoProviderRows });
      expect(imageReady).toMatchObject({ status: 'False', reason: Reason.NoProviderRows });
    }
  });

  it(`lists at most ${MAX_LISTED_PROVIDERS} not-ready Providers, sorted, then counts the rest`, () => {
    const rows = Array.from({ length: 12 }, (_, i) => row(`p${String(11 - i).padStart(2, '0')}`, false));
    const { ready } = conditionsOf(decideVMImageConditions(image(rows), T0));
    expect(ready?.message).toBe(
      'Image not ready on 12 of 12 Providers: ' +
        Array.from({ length: 10 }, (_, i) => `team-a/p${String(i).padStart(2, '0')}: no reason reported`).join(', ') +
        ' and 2 more',
    );
  });

  it('returns deep-equal conditions when run again on unchanged rows', () => {
    for (const rows of [[row('east', true)], [row('east', false, 'ImportFailed'), row('west', false)], []]) {
      const first = decideVMImageConditions(image(rows), T0);
      const second = decideVMImageConditions(image(rows, first), T1);
      expect(second).toEqual(first);
    }
  });

  it('does not depend on the order of the rows', () => {
    const rows = [row('b', false, 'X'), row('a', false, 'Y'), row('c', true)];
    expect(decideVMImageConditions(image([...rows].reverse()), T0)).toEqual(decideVMImageConditions(image(rows), T0));
  });

  it('moves lastTransitionTime only when the status changes and leaves other conditions alone', () => {
    const other: Condition = { type: 'Other', status: 'True', reason: 'Fine', message: '', lastTransitionTime: '2024-01-01T00:00:00Z' };
    const first = decideVMImageConditions(image([row('east', false, 'Importing')], [other]), T0);
    const second = decideVMImageConditions(image([row('east', true)], first), T1);
    expect(findCondition(second, 'Other')).toEqual(other);
    expect(findCondition(second, ConditionType.Ready)?.lastTransitionTime).toBe('2025-01-01T00:05:00Z');
  });
});
