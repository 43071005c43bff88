// Which cluster a command talks to: the kubeconfig's current context, or the
// one --context names; a context the file does not have is an error naming
// the ones it has.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadKubeConfig, serverOf } from '../../../controller/runtime/kube-config.js';
import { runCli } from '../../support/cli-in-process.js';

const dir = mkdtempSync(join(tmpdir(), 'banlieue-kubeconfig-'));
const path = join(dir, 'config');
writeFileSync(
  path,
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      { name: 'staging', cluster: { server: 'https://staging.example.com:6443' } },
      { name: 'prod', cluster: { server: 'https://prod.example.com:6443' } },
    ],
    users: [{ name: 'me', user: { token: 'not-used' } }],
    contexts: [
      { name: 'staging', context: { cluster: 'staging', user: 'me' } },
      { name: 'prod', context: { cluster: 'prod', user: 'me' } },
    ],
    'current-context': 'staging',
  }),
);

describe('kubeconfig contexts', () => {
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('takes the current context, or the one asked for', () => {
    expect(serverOf(loadKubeConfig(path))).toBe('https://staging.example.com:6443');
    expect(serverOf(loadKubeConfig(path, 'prod'))).toBe('https://prod.example.com:6443');
  });

  it('names the contexts the file has when --context names another', async () => {
    expect(() => loadKubeConfig(path, 'production')).toThrow(`kubeconfig ${path} has no context "production" (contexts: staging, prod)`);
    const run = await runCli(['controller', '--kubeconfig', path, '--context', 'production']);
    expect(run.rc).not.toBe(0);
    expect(run.err).toContain('has no context "production" (contexts: staging, prod)');
  });
});
