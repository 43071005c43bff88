// The process and Node.js series carry the names every Prometheus client gives
// them, so existing dashboards and alerts read banlieue's roles as they are.
import { describe, expect, it } from 'vitest';
import { Metrics } from '../../../controller/runtime/metrics.js';

describe('Metrics', () => {
  it('exports process_* and nodejs_* under their standard names', async () => {
    const text = await new Metrics().registry.metrics();
    expect(text).toMatch(/^process_cpu_user_seconds_total \d/m);
    expect(text).toMatch(/^process_start_time_seconds \d/m);
    expect(text).toMatch(/^nodejs_heap_size_used_bytes \d/m);
    expect(text).not.toContain('banlieue_process_');
  });
});
