// What `make bench` runs: named cases that measure and report, never assert
// on speed (STYLE §2 Tests: performance lives in `make bench`).
import type { Teardown } from './teardown.js';

export interface BenchReport {
  /** Human-readable lines, printed as they are. */
  readonly table: string;
  /** Printed as one `BENCH_RESULT {...}` line for scripts and CI history. */
  readonly result: Record<string, unknown>;
}

export interface BenchCase {
  readonly name: string;
  /**
   * Set up, measure, report. Everything started is registered on `teardown`;
   * rejects only when the run cannot complete (a deadline passed, a peer died).
   */
  run(teardown: Teardown, say: (message: string) => void): Promise<BenchReport>;
}
