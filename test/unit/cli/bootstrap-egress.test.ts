// `banlieue bootstrap operator --network-policies` with the addresses the pods
// may reach: the NetworkPolicies it prints hold exactly those CIDRs, and a
// choice that would leave ports open to every host is an error, not an install.
// The CLI runs in process (a unit test starts no process).
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { runCli, type CliRun } from '../../support/cli-in-process.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** `bootstrap operator --dry-run --network-policies` with `args`. */
const run = (args: string[]): Promise<CliRun> => runCli(['bootstrap', 'operator', '--dry-run', '--network-policies', ...args]);

/** Every ipBlock CIDR of the printed NetworkPolicies' egress rules. */
const egressCidrs = (yaml: string): string[] =>
  parseAllDocuments(yaml)
    .map((d) => d.toJS() as Json)
    .filter((o) => o?.kind === 'NetworkPolicy')
    .flatMap((p) =>
      ((p.spec?.egress ?? []) as Json[]).flatMap((rule) => ((rule.to ?? []) as Json[]).flatMap((to) => (to.ipBlock ? [to.ipBlock.cidr as string] : []))),
    );

describe('bootstrap operator --egress-api-server / --egress-backends', () => {
  it('prints NetworkPolicies that reach only the CIDRs given', async () => {
    const { rc, out } = await run(['--egress-api-server', '192.0.2.10/32', '--egress-backends', '10.20.0.0/16, 10.30.0.0/24']);
    expect(rc).toBe(0);
    expect(new Set(egressCidrs(out))).toEqual(new Set(['192.0.2.10/32', '10.20.0.0/16', '10.30.0.0/24']));
  });

  it('refuses backends without the API server, saying why, and prints nothing', async () => {
    const { rc, out, err } = await run(['--egress-backends', '10.20.0.0/16']);
    expect(rc).not.toBe(0);
    expect(err).toContain('networkPolicyEgress.backends needs networkPolicyEgress.apiServer too');
    expect(out).toBe('');
  });

  it('refuses a value that is no CIDR, naming it', async () => {
    const { rc, err } = await run(['--egress-api-server', 'api.example.com']);
    expect(rc).not.toBe(0);
    expect(err).toContain('"api.example.com" is not a CIDR');
  });
});
