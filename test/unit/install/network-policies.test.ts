import { describe, expect, it } from 'vitest';
import { renderInstall, type ManifestObject } from '../../../infra/install/render.js';

interface Peer {
  ipBlock?: { cidr: string };
}
interface EgressRule {
  to?: Peer[];
  ports: { protocol: string; port: number }[];
}
type NetworkPolicy = ManifestObject & { spec: { egress: EgressRule[] } };

const egressOf = (props: object): EgressRule[] => {
  const policy = renderInstall({ networkPolicies: true, ...props })
    .flatMap((c) => c.objects)
    .find((o): o is NetworkPolicy => o.kind === 'NetworkPolicy');
  if (!policy) throw new Error('no NetworkPolicy rendered');
  return policy.spec.egress;
};

const isDns = (rule: EgressRule): boolean => rule.ports.every((p) => p.port === 53);
const cidrsOf = (rule: EgressRule): string[] | undefined => rule.to?.map((peer) => peer.ipBlock?.cidr ?? JSON.stringify(peer));

describe('the NetworkPolicy egress of the banlieue pods', () => {
  it('reaches the API server and the backends only at the addresses the admin names, on their ports; DNS anywhere', () => {
    const egress = egressOf({ networkPolicyEgress: { apiServer: ['172.18.0.2/32'], backends: ['10.20.0.0/16', 'fd00:20::/64'] } });
    const [dns, ...others] = egress;
    expect(dns && isDns(dns)).toBe(true);
    expect(dns?.to).toBeUndefined();
    expect(others.length).toBeGreaterThan(0);
    for (const rule of others) expect(rule.to, JSON.stringify(rule)).toBeDefined();
    const apiServer = others.find((r) => r.ports.some((p) => p.port === 6443));
    expect(apiServer && cidrsOf(apiServer)).toEqual(['172.18.0.2/32']);
    const backends = others.find((r) => r.ports.some((p) => p.port === 16514));
    expect(backends && cidrsOf(backends)).toEqual(['10.20.0.0/16', 'fd00:20::/64']);
  });

  it('reaches any address on those ports when the admin names none (the default)', () => {
    const egress = egressOf({});
    expect(egress.every((rule) => rule.to === undefined)).toBe(true);
  });

  it('refuses a backend restriction that port 443 of an unrestricted API server rule would undo', () => {
    expect(() => egressOf({ networkPolicyEgress: { backends: ['10.20.0.0/16'] } })).toThrow(/networkPolicyEgress\.apiServer/);
  });

  it('refuses an address that is no CIDR, naming the prop and the value', () => {
    expect(() => egressOf({ networkPolicyEgress: { apiServer: ['172.18.0.2'], backends: ['10.20.0.0/16'] } })).toThrow(
      /networkPolicyEgress\.apiServer.*"172\.18\.0\.2"/,
    );
    expect(() => egressOf({ networkPolicyEgress: { apiServer: ['172.18.0.2/32'], backends: ['vcenter.example.com/32'] } })).toThrow(
      /networkPolicyEgress\.backends.*"vcenter\.example\.com\/32"/,
    );
  });
});
