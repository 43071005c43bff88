// `banlieue version` against a cluster banlieue is installed in: the client's
// version and the installed one (its controller image's tag), and the skew
// when they differ; without a cluster, the client's alone and why.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { RELEASE_TAG } from '../../infra/version.js';
import { banlieueCommand } from '../support/bundles.js';
import { TestApi } from '../support/fixtures.js';
import { INSTALL_NS, installDefault } from '../support/tenant.js';

const t = new TestApi();
const controller = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'banlieue-controller', namespace: INSTALL_NS } };

async function version(args: readonly string[]): Promise<{ code: number | null; out: string }> {
  const [node, command] = await banlieueCommand(['version', ...args]);
  const child = spawn(node, command, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
  child.stderr.on('data', (d: Buffer) => (out += d.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, out };
}

const imageOf = async (): Promise<string> => ((await t.get(controller))?.spec?.template?.spec?.containers?.[0]?.image as string) ?? '';
const setImage = (image: string): Promise<unknown> =>
  t.patch(controller, [{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: image }], 'application/json-patch+json');

describe('banlieue version', () => {
  let image: string;
  beforeAll(async () => {
    await installDefault();
    image = await imageOf();
  }, 180_000);
  afterAll(async () => {
    // Back as the install made it, for the suites after this one.
    await setImage(image);
  });

  it("prints this client's version and the installed one, the same", async () => {
    const run = await version(['--kubeconfig', inject('kubeconfig')]);
    expect(run.code).toBe(0);
    expect(run.out).toMatch(new RegExp(`^client: ${RELEASE_TAG}`));
    expect(run.out).toContain(`installed: ${RELEASE_TAG} (`);
    expect(run.out).not.toContain('skew');
  });

  it('says the skew when the cluster runs another version', async () => {
    await setImage(image.replace(/:[^:/@]+$/, ':v9.9.9'));
    const run = await version(['--kubeconfig', inject('kubeconfig')]);
    expect(run.out).toContain('installed: v9.9.9');
    expect(run.out).toContain(`skew: this client is ${RELEASE_TAG}, the cluster runs v9.9.9`);
  });

  it('prints the client alone, and why, where banlieue is not installed', async () => {
    const run = await version(['--kubeconfig', inject('kubeconfig'), '--namespace', 'kube-public']);
    expect(run.code).toBe(0);
    expect(run.out).toContain('installed: unknown (no Deployment kube-public/banlieue-controller: not installed there)');
  });
});
