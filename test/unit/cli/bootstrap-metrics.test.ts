// `banlieue bootstrap operator --expose-metrics [--service-monitor]`: the flags
// map to the install props exposeMetrics and serviceMonitor, and a ServiceMonitor
// for metrics that listen on loopback only is an error, not an install. The CLI
// runs in process (a unit test starts no process).
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { runCli, type CliRun } from '../../support/cli-in-process.js';

const run = (args: string[]): Promise<CliRun> => runCli(['bootstrap', 'operator', '--dry-run', ...args]);

/** The kind and name of each printed object of `kinds`. */
const printed = (yaml: string, kinds: readonly string[]): string[] =>
  parseAllDocuments(yaml)
    .map((d) => d.toJS() as { kind?: string; metadata?: { name?: string } } | null)
    .filter((o) => kinds.includes(o?.kind ?? ''))
    .map((o) => `${o?.kind ?? ''} ${o?.metadata?.name ?? ''}`);

describe('bootstrap operator --expose-metrics / --service-monitor', () => {
  it('prints a metrics Service per role with --expose-metrics, and no ServiceMonitor', async () => {
    const { rc, out } = await run(['--expose-metrics', '--backends', 'vsphere']);
    expect(rc).toBe(0);
    expect(printed(out, ['Service', 'ServiceMonitor']).sort()).toEqual(['Service banlieue-controller-metrics', 'Service banlieue-provider-vsphere-metrics']);
  });

  it('prints a ServiceMonitor per role with --service-monitor too', async () => {
    const { rc, out } = await run(['--expose-metrics', '--service-monitor', '--backends', 'vsphere']);
    expect(rc).toBe(0);
    expect(printed(out, ['ServiceMonitor']).sort()).toEqual(['ServiceMonitor banlieue-controller', 'ServiceMonitor banlieue-provider-vsphere']);
  });

  it('refuses --service-monitor without --expose-metrics, saying why, and prints nothing', async () => {
    const { rc, out, err } = await run(['--service-monitor']);
    expect(rc).not.toBe(0);
    expect(err).toContain('serviceMonitor needs exposeMetrics');
    expect(out).toBe('');
  });
});
