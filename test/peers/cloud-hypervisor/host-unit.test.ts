// The systemd unit `banlieue host install` writes, read by systemd's own tools:
// `systemd-analyze verify` takes it without a warning, and `systemd-analyze
// security` (offline, on the file) rates its exposure low, with and without a
// network namespace for the guests' bridges. Skipped where systemd-analyze is
// not installed.
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { renderHostInstall, type HostInstallOptions } from '../../../controller/cli/host-install.js';
import { HOST_INSTALL_OPTIONS } from '../../support/cloud-hypervisor/host-install-options.js';

const run = promisify(execFile);
const UNIT = 'banlieue-provider-cloud-hypervisor.service';
/** The highest exposure `systemd-analyze security` may rate the unit (0 best, 10 worst; 9.6 is an unsandboxed root service). */
const MAX_EXPOSURE = 3;

const hasAnalyze = ((): boolean => {
  try {
    execFileSync('systemd-analyze', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

// verify checks that ExecStart= names an executable.
const options: HostInstallOptions = { ...HOST_INSTALL_OPTIONS, banlieue: process.execPath };

describe.skipIf(!hasAnalyze)('the Cloud Hypervisor host unit, by systemd-analyze', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bnlunit-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const unitFile = (variant: string, extra: Partial<HostInstallOptions>): string => {
    const content = renderHostInstall({ ...options, ...extra }).files.find((f) => f.path.endsWith(UNIT))?.content ?? '';
    const variantDir = join(dir, variant);
    mkdirSync(variantDir, { recursive: true });
    const path = join(variantDir, UNIT);
    writeFileSync(path, content);
    return path;
  };

  it.each([
    ['host namespace', {}],
    ['bridges in a network namespace', { netns: 'guests' }],
  ])('verifies without a warning (%s)', async (variant, extra) => {
    const { stdout, stderr } = await run('systemd-analyze', ['verify', '--man=no', unitFile(variant, extra)], { timeout: 60_000 });
    expect(`${stdout}${stderr}`.trim()).toBe('');
  });

  it.each([
    ['host namespace', {}],
    ['bridges in a network namespace', { netns: 'guests' }],
  ])(`is rated at most ${MAX_EXPOSURE} exposure by systemd-analyze security (%s)`, async (variant, extra) => {
    const path = unitFile(variant, extra);
    const result = await run('systemd-analyze', ['security', '--offline=true', '--no-pager', path], { timeout: 60_000 });
    const exposure = Number(/Overall exposure level for \S+: ([0-9.]+)/.exec(result.stdout)?.[1]);
    expect(exposure, result.stdout).toBeLessThanOrEqual(MAX_EXPOSURE);
  });
});
