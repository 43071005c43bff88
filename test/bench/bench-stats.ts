// Helpers every bench case shares: percentiles, units, env knobs, log tails,
// keeping a role's whole log, and stopping a role process.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RoleProcess } from '../support/controller-process.js';

/** Nearest-rank percentiles, ms. */
export function percentiles(values: number[]): { p50: number; p95: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number): number => Math.round(sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] ?? NaN);
  return { p50: at(0.5), p95: at(0.95) };
}

export function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return value;
}

export const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
export const round = (x: number): number => Math.round(x * 10) / 10;
export const tail = (text: string, lines = 20): string => text.trimEnd().split('\n').slice(-lines).join('\n');

/**
 * A role's whole log (JSON lines, each with its time) into BENCH_LOG_DIR as `<name>.log`, when that
 * is set: where a run's time went is read from the roles' own passes. Nothing otherwise.
 */
export function keepLog(name: string, logs: string): void {
  const dir = process.env.BENCH_LOG_DIR;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${name}.log`), logs);
}

/** SIGTERM, and SIGKILL when the role has not exited after 10 s. */
export async function stopRole(role: RoleProcess): Promise<void> {
  const timer = setTimeout(() => void role.kill(), 10_000);
  await role.stop();
  clearTimeout(timer);
}
