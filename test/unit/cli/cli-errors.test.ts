// What the CLI says when it cannot start: each error names what is wrong and
// what to do, before anything is contacted.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runCli } from '../../support/cli-in-process.js';

describe('banlieue CLI errors', () => {
  afterEach(() => vi.unstubAllEnvs());

  it('names an unknown backend as such, listing the backends', async () => {
    const run = await runCli(['provider', 'vmwar']);
    expect(run.rc).not.toBe(0);
    expect(run.err).toBe('error: provider vmwar: no such backend (backends: vsphere, proxmox, libvirt, cloud-hypervisor)\n');
  });

  it('says there is no kubeconfig when there is none, instead of refusing an http:// server it made up', async () => {
    const home = mkdtempSync(join(tmpdir(), 'banlieue-home-'));
    try {
      vi.stubEnv('HOME', home);
      vi.stubEnv('KUBECONFIG', '');
      vi.stubEnv('KUBERNETES_SERVICE_HOST', '');
      const run = await runCli(['controller']);
      expect(run.rc).not.toBe(0);
      expect(run.err).toContain('no kubeconfig: pass --kubeconfig FILE, set KUBECONFIG, or write ~/.kube/config');
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
