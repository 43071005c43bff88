// The Grafana dashboard's JSON model: queries that parse as PromQL and select only
// defined metrics, panels that do not overlap. Checked against the roles' live
// /metrics in test/integration/grafana-dashboard.test.ts.
import { describe, expect, it } from 'vitest';
import { METRICS, PROCESS_METRICS } from '../../../infra/metrics/definitions.js';
import { grafanaDashboard, type DashboardPanel } from '../../../infra/metrics/grafana-dashboard.js';
import { namesInQuery } from '../../support/promql.js';

const dashboard = grafanaDashboard('v1.2.3') as { uid: string; panels: DashboardPanel[] };
const queries = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr.replaceAll('$__rate_interval', '5m') })));

/** Every series name a role serves from the definitions (a histogram's _bucket, _sum, _count), and the process metrics. */
const defined = new Set([
  ...Object.values(METRICS).flatMap((m) => (m.type === 'histogram' ? ['_bucket', '_sum', '_count'].map((s) => `${m.name}${s}`) : [m.name])),
  ...Object.values(PROCESS_METRICS),
]);

describe('the Grafana dashboard model', () => {
  it.each(queries)('$panel: $expr parses and selects defined metrics only', ({ expr }) => {
    const { selectors } = namesInQuery(expr);
    expect(selectors.length).toBeGreaterThan(0);
    for (const { metric } of selectors) expect(defined, metric).toContain(metric);
  });

  it('gives each panel its own id and its own place on the grid', () => {
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    const cells = new Set<string>();
    for (const { gridPos, title } of dashboard.panels) {
      expect(gridPos.x + gridPos.w, title).toBeLessThanOrEqual(24);
      for (let x = gridPos.x; x < gridPos.x + gridPos.w; x++) {
        for (let y = gridPos.y; y < gridPos.y + gridPos.h; y++) {
          expect(cells.has(`${x},${y}`), `${title} overlaps at ${x},${y}`).toBe(false);
          cells.add(`${x},${y}`);
        }
      }
    }
  });

  it('reads every panel from the data source the user picks', () => {
    for (const p of dashboard.panels.filter((panel) => panel.type !== 'row'))
      expect(p.datasource, p.title).toEqual({ type: 'prometheus', uid: '${datasource}' });
  });
});
