// The process and Node.js series carry the names every Prometheus client gives
// them, so existing dashboards and alerts read banlieue's roles as they are.
import { describe, expect, it } from 'vitest';
import { Metrics } from '../../../controller/runtime/metrics.js';
import { METRICS } from '../../../infra/metrics/definitions.js';

describe('Metrics', () => {
  it('exports process_* and nodejs_* under their standard names', async () => {
    const text = await new Metrics().registry.metrics();
    expect(text).toMatch(/^process_cpu_user_seconds_total \d/m);
    expect(text).toMatch(/^process_start_time_seconds \d/m);
    expect(text).toMatch(/^nodejs_heap_size_used_bytes \d/m);
    expect(text).not.toContain('banlieue_process_');
  });

  it('registers no metric of its own beyond the definitions', async () => {
    const names = (await new Metrics({ defaultMetrics: false }).registry.getMetricsAsJSON()).map((m) => m.name);
    expect(names.sort()).toEqual(
      Object.values(METRICS)
        .map((m) => m.name)
        .sort(),
    );
  });

  it.each(Object.values(METRICS))('registers $name as its definition says (type, help, labels)', async ({ name, type, help, labelNames }) => {
    const registry = new Metrics({ defaultMetrics: false }).registry;
    const metric = registry.getSingleMetric(name) as unknown as { labelNames: string[] } | undefined;
    expect(metric?.labelNames).toEqual(labelNames);
    const json = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
    expect(json).toMatchObject({ type, help });
  });
});
