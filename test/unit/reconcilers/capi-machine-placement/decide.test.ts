import { describe, expect, it } from 'vitest';
import { decideMachineFailureDomain } from '../../../../controller/reconcilers/capi-machine-placement/decide.js';

const fd = (name: string, provider: string, controlPlane = true) => ({ name, controlPlane, attributes: { provider } });
const fds = [fd('a-1', 'a'), fd('a-2', 'a', false), fd('b-1', 'b'), fd('b-2', 'b', false)];

describe('failure domains for CAPI machines without one', () => {
  it('spreads machines of a group over the least-used failure domains, ties by name', () => {
    const placed: string[] = [];
    for (let i = 0; i < 5; i++) {
      const p = decideMachineFailureDomain({ failureDomains: fds, controlPlane: false, peers: placed });
      placed.push(p?.failureDomain ?? '');
    }
    expect(placed).toEqual(['a-1', 'a-2', 'b-1', 'b-2', 'a-1']);
  });

  it('keeps control-plane machines in control-plane failure domains', () => {
    expect(decideMachineFailureDomain({ failureDomains: fds, controlPlane: true, peers: ['a-1'] })).toEqual({ failureDomain: 'b-1', providerName: 'b' });
  });

  it("stays within the machine's Provider when it names one", () => {
    expect(decideMachineFailureDomain({ failureDomains: fds, controlPlane: false, peers: ['b-1'], providerName: 'b' })?.failureDomain).toBe('b-2');
  });

  it('has no answer when nothing is eligible', () => {
    expect(decideMachineFailureDomain({ failureDomains: [fd('x', 'a', false)], controlPlane: true, peers: [] })).toBeUndefined();
    expect(decideMachineFailureDomain({ failureDomains: [], controlPlane: false, peers: [] })).toBeUndefined();
  });
});
