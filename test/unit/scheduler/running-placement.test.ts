// A running VM stays where it runs unless that is truly impossible.
import { describe, expect, it } from 'vitest';
import type { Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import { Reason } from '../../../infra/api/conditions.js';
import { judgeRunningPlacement, type RunningFacts, type RunningInput } from '../../../controller/scheduler/running-placement.js';
import { provider, virtualMachine, vsphereDomain } from './fixtures.js';

const HOME: RunningFacts = { providerName: 'vcenter-a', failureDomain: 'vcenter-a-dc1-c1', placementChanged: false };
const vcenterA = provider('vcenter-a', { labels: { env: 'prod' } });
const unreachable = { reason: Reason.ConnectFailed, message: 'connection refused' };

/** What a case changes: the input's fields, and some of the running facts. */
type Change = Partial<Omit<RunningInput, 'running'>> & { running?: Partial<RunningFacts> };

function judge(change: Change = {}): ReturnType<typeof judgeRunningPlacement> {
  return judgeRunningPlacement({ vm: virtualMachine('web-1'), providers: [vcenterA], siblings: () => [], ...change, running: { ...HOME, ...change.running } });
}

const withoutHome = provider('vcenter-a', { labels: { env: 'prod' }, failureDomains: [vsphereDomain('vcenter-a', 'dc1', 'c2')] });
const overCapacity: Provider = {
  ...withoutHome,
  status: {
    failureDomains: [],
    conditions: [{ type: 'Ready', status: 'False', reason: Reason.CapacityExceeded, message: 'disk 97% > 90%', lastTransitionTime: '2026-03-01T12:00:00Z' }],
  },
};

describe('judging where a VM runs', () => {
  it.each<[string, Change]>([
    ['its place fits as it did', {}],
    ['a Provider that sorts first appears', { providers: [provider('vcenter-0'), vcenterA] }],
    ['its Provider is paused', { providers: [provider('vcenter-a', { labels: { env: 'prod' }, paused: true })] }],
    [
      'its Provider no longer carries the labels its unchanged selector matched',
      { vm: virtualMachine('web-1', { placement: { providerSelector: { matchLabels: { env: 'test' } } } }) },
    ],
    ['its failure domain is withdrawn while its machine reaches the backend', { providers: [withoutHome] }],
    ['its machine reports the backend unreachable while its failure domain is published', { running: { unreachable } }],
  ])('keeps it when %s', (_, change) => {
    expect(judge(change)).toMatchObject({ stays: true });
  });

  it('says why a withdrawn failure domain takes no new VM, from the Provider', () => {
    expect(judge({ providers: [overCapacity] })).toMatchObject({
      stays: true,
      withdrawn:
        'Provider vcenter-a no longer offers failure domain vcenter-a-dc1-c1 to new VMs (CapacityExceeded: disk 97% > 90%); the VM keeps running there and nothing new is placed there',
    });
  });

  it.each<[string, Change, Reason, string]>([
    ['its Provider no longer exists', { providers: [provider('vcenter-b')] }, Reason.ProviderGone, 'Provider vcenter-a it runs on no longer exists'],
    [
      'its Provider is being deleted',
      { providers: [{ ...vcenterA, metadata: { ...vcenterA.metadata, deletionTimestamp: '2026-03-01T12:00:00Z' } }] },
      Reason.ProviderGone,
      'Provider vcenter-a it runs on is being deleted',
    ],
    [
      'its failure domain is gone and its machine reports the backend unreachable',
      { providers: [withoutHome], running: { unreachable } },
      Reason.FailureDomainGone,
      'failure domain vcenter-a-dc1-c1 is no longer published by Provider vcenter-a and its machine reports the backend unreachable (ConnectFailed: connection refused)',
    ],
    [
      'the user changed its providerSelector to exclude its Provider',
      { vm: virtualMachine('web-1', { placement: { providerSelector: { matchLabels: { env: 'test' } } } }), running: { placementChanged: true } },
      Reason.PlacementExcluded,
      'spec.placement.providerSelector env=test no longer matches Provider vcenter-a it runs on',
    ],
    [
      'the user changed its failureDomainSelector to exclude its failure domain',
      { vm: virtualMachine('web-1', { placement: { failureDomainSelector: { matchLabels: { cluster: 'c2' } } } }), running: { placementChanged: true } },
      Reason.PlacementExcluded,
      'spec.placement.failureDomainSelector cluster=c2 no longer matches failure domain vcenter-a/vcenter-a-dc1-c1 it runs in',
    ],
  ])('finds it impossible when %s', (_, change, reason, message) => {
    expect(judge(change)).toEqual({ stays: false, reason, message });
  });

  it('finds it impossible when the user added an anti-affinity term its place breaks', () => {
    const placement = { antiAffinity: [{ topologyKey: 'name', labelSelector: { matchLabels: { app: 'db' } }, mode: 'required' as const }] };
    const sibling = virtualMachine('db-2', { labels: { app: 'db' }, scheduledOn: ['vcenter-a', 'vcenter-a-dc1-c1'] });
    const verdict = judge({ vm: virtualMachine('db-1', { labels: { app: 'db' }, placement }), siblings: () => [sibling], running: { placementChanged: true } });
    expect(verdict).toMatchObject({ stays: false, reason: Reason.PlacementExcluded });
    expect(verdict.stays ? '' : verdict.message).toContain('(db-2), and it runs in vcenter-a/vcenter-a-dc1-c1');
    // The same term, unchanged since the VM was placed, moves nothing.
    expect(judge({ vm: virtualMachine('db-1', { labels: { app: 'db' }, placement }), siblings: () => [sibling] })).toMatchObject({ stays: true });
  });
});
