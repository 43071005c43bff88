// The Grafana dashboard shipped with the release asks only for what the roles
// serve. The controller and the vSphere provider run as processes against the
// test API server and vcsim, with one VirtualMachine made Ready so that their
// series have samples; each query of each panel, parsed with Prometheus' own
// PromQL grammar, must name metrics one of their live /metrics serves, and
// filter and group by labels those metrics' samples carry (or that Prometheus
// adds to every target: dashboard's TARGET_LABELS).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grafanaDashboard, TARGET_LABELS, type DashboardPanel } from '../../infra/metrics/grafana-dashboard.js';
import { METRICS } from '../../infra/metrics/definitions.js';
import { RELEASE_TAG } from '../../infra/version.js';
import { TestApi, vm } from '../support/fixtures.js';
import { mergeExpositions, readExposition, unservedNames, type Exposition } from '../support/promql.js';
import { readyWithAddress, startVsphereEnv, stopVsphereEnv, type VsphereEnv } from '../support/vsphere/env.js';

const t = new TestApi();
/** Counted only when a reconcile fails. */
const FAILURE_COUNTERS: readonly string[] = [METRICS.reconcileErrors.name, METRICS.workqueueRetries.name];
const dashboard = grafanaDashboard(RELEASE_TAG) as { panels: DashboardPanel[]; templating: { list: { name: string; definition?: string }[] } };
const queries = dashboard.panels.flatMap((p) => (p.targets ?? []).map((target) => ({ panel: p.title, expr: target.expr })));

/**
 * A query as Prometheus receives it from Grafana: `$__rate_interval` replaced by a
 * window. The dashboard's other variable ($namespace) is only inside label values.
 */
const asPrometheusGetsIt = (expr: string): string => expr.replaceAll('$__rate_interval', '5m');

describe('the Grafana dashboard', () => {
  let env: VsphereEnv;
  let live: Exposition;

  beforeAll(async () => {
    env = await startVsphereEnv('dashboard');
    const cls = env.world.vmClass.metadata.name ?? '';
    const image = env.world.vmImage.metadata.name ?? '';
    await t.apply(vm(env.ns, 'scraped', cls, image));
    await readyWithAddress(env, 'scraped', '10.0.0.9');
    const scrape = async (port: number): Promise<Exposition> => readExposition(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text());
    live = mergeExpositions([await scrape(env.controller.metricsPort), await scrape(env.provider.metricsPort)]);
  });

  afterAll(() => stopVsphereEnv(env));

  it('has panels for queue depth and latency, reconcile errors, backend calls and errors, and VMs by phase', () => {
    const selected = new Set(queries.flatMap((q) => [...q.expr.matchAll(/([a-z_:]+)\{/g)].map((m) => m[1])));
    for (const metric of [
      METRICS.workqueueDepth.name,
      `${METRICS.workqueueQueueDuration.name}_bucket`,
      METRICS.reconcileErrors.name,
      METRICS.backendCalls.name,
      METRICS.virtualMachines.name,
    ]) {
      expect(selected, metric).toContain(metric);
    }
  });

  it.each(queries)('$panel: every metric and label of $expr is served by the roles', ({ expr }) => {
    const { problems, unsampled } = unservedNames(asPrometheusGetsIt(expr), live, TARGET_LABELS);
    expect(problems).toEqual([]);
    // A healthy run fails no reconcile, so the failure counters may have no sample here: their labels are
    // checked against the registry instead (test/unit/runtime/metrics.test.ts) and typed in the dashboard.
    expect(unsampled.filter((m) => !FAILURE_COUNTERS.includes(m))).toEqual([]);
  });

  it('lists namespaces from a metric the roles serve, by a label Prometheus adds', () => {
    const variable = dashboard.templating.list.find((v) => v.name === 'namespace');
    const [, metric = '', label = ''] = /^label_values\((\w+), (\w+)\)$/.exec(variable?.definition ?? '') ?? [];
    expect(live.series).toContain(metric);
    expect(TARGET_LABELS).toContain(label);
  });

  it('would catch a query naming a metric or a label the roles do not serve', () => {
    // The same check on queries written wrong: a misspelt metric, an unknown label in a matcher and in by ().
    expect(unservedNames('sum by (name) (rate(workqueue_add_total[5m]))', live, TARGET_LABELS).problems).toEqual(['metric workqueue_add_total is not served']);
    expect(unservedNames('workqueue_depth{queue="x"}', live, TARGET_LABELS).problems).toEqual(['workqueue_depth has no label queue']);
    expect(unservedNames('sum by (provider) (rate(banlieue_backend_calls_total[5m]))', live, TARGET_LABELS).problems).toEqual([
      'by (provider): no label provider on banlieue_backend_calls_total',
    ]);
    expect(() => unservedNames('sum by (name (workqueue_depth)', live, TARGET_LABELS)).toThrow(/syntax error/);
  });
});
