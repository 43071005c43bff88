// `banlieue uninstall` against the real API server, as an admin runs it: what `bootstrap
// operator` applied goes (the install read from the same rendered charts), the CRDs and the
// users' objects stay, and a second `bootstrap operator` puts the install back. The install
// is into a namespace of this file's own; the default install is applied again at the end,
// as the other suites expect it.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_KINDS } from '../../infra/api/kinds.js';
import { crdName } from '../../infra/api/kind.js';
import { renderInstall, type ManifestObject } from '../../infra/install/render.js';
import { TestApi, vm } from '../support/fixtures.js';
import { createNamespace } from '../support/kube.js';
import { banlieueAsAdmin, installDefault, type KubectlRun } from '../support/tenant.js';

const banlieue = (...args: string[]): Promise<KubectlRun> => banlieueAsAdmin(args);

const t = new TestApi();
const installNs = `banlieue-uninstall-${randomBytes(3).toString('hex')}`;
let users: Awaited<ReturnType<typeof createNamespace>>;
/** The flags of this file's install: every optional part, credentials scoped to the users' namespace. */
let installFlags: string[];
/** What that install consists of, chart by chart, as bootstrap operator renders it. */
let charts: { name: string; objects: ManifestObject[] }[];

const describeObj = (o: ManifestObject): string => `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;
const present = async (objects: readonly ManifestObject[]): Promise<string[]> => {
  const found: string[] = [];
  for (const o of objects) if (await t.get(o)) found.push(describeObj(o));
  return found;
};
const except = (chart: string): ManifestObject[] => charts.filter((c) => c.name !== chart).flatMap((c) => c.objects);
const crdsOf = (): ManifestObject[] => charts.find((c) => c.name === 'banlieue-crds')?.objects ?? [];

beforeAll(async () => {
  users = await createNamespace('uninstall-users');
  installFlags = ['--namespace', installNs, '--network-policies', '--provider-namespaces', users.name];
  charts = renderInstall({ namespace: installNs, networkPolicies: true, providerNamespaces: [users.name] });
  const installed = await banlieue('bootstrap', 'operator', '--wait=false', ...installFlags);
  expect(installed.code, installed.stderr).toBe(0);
  await t.apply(vm(users.name, 'kept', 'small', 'ubuntu'));
});

afterAll(async () => {
  await installDefault();
  await users?.remove();
});

describe('banlieue uninstall', () => {
  it('with --dry-run names what it would delete and deletes nothing', async () => {
    const result = await banlieue('uninstall', '--dry-run', '--namespace', installNs);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`would delete Deployment ${installNs}/banlieue-controller`);
    expect(result.stdout).toContain(`would delete Role ${users.name}/banlieue-provider-vsphere-credentials`);
    expect(result.stdout).toContain(`would delete Namespace ${installNs}`);
    expect(result.stdout).not.toContain('CustomResourceDefinition');
    expect(await present(except('banlieue-crds'))).toHaveLength(except('banlieue-crds').length);
  });

  it('removes everything bootstrap operator applied but the CRDs, keeps the users’ VirtualMachines, and bootstrap operator puts it all back', async () => {
    const before = await t.get(vm(users.name, 'kept', 'small', 'ubuntu'));
    const removed = await banlieue('uninstall', '--namespace', installNs);
    expect(removed.code, removed.stderr).toBe(0);
    const lines = removed.stdout.trim().split('\n');
    // Every line a deletion, the Deployments first and the Namespace last.
    expect(lines.every((l) => l.startsWith('deleted '))).toBe(true);
    expect(lines[0]).toMatch(/^deleted Deployment /);
    expect(lines.at(-1)).toBe(`deleted Namespace ${installNs}`);
    expect(lines).toHaveLength(except('banlieue-crds').length);
    // Gone (uninstall waited for them), the Namespace too; the CRDs and the VM stay.
    expect(await present(except('banlieue-crds'))).toEqual([]);
    expect(await present(crdsOf())).toEqual(crdsOf().map(describeObj));
    expect(
      crdsOf()
        .filter((o) => o.kind === 'CustomResourceDefinition')
        .map((o) => o.metadata.name)
        .sort(),
    ).toEqual(ALL_KINDS.map(crdName).sort());
    expect((await t.get(vm(users.name, 'kept', 'small', 'ubuntu')))?.metadata.uid).toBe(before?.metadata.uid);

    const again = await banlieue('bootstrap', 'operator', '--wait=false', ...installFlags);
    expect(again.code, again.stderr).toBe(0);
    expect(await present(charts.flatMap((c) => c.objects))).toHaveLength(charts.flatMap((c) => c.objects).length);
  });

  it('keeps the Namespace while a Secret of the user is in it, saying so', async () => {
    const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'user-credentials', namespace: installNs }, stringData: { password: 'x' } };
    await t.apply(secret);
    const result = await banlieue('uninstall', '--namespace', installNs);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`kept Namespace ${installNs}: it holds what the install did not put there (Secret user-credentials)`);
    expect(result.stdout).not.toContain('password');
    expect(await t.get(secret)).toBeDefined();
    expect(await present(except('banlieue-namespace').filter((o) => o.kind === 'Deployment'))).toEqual([]);
    await t.delete(secret);
    const installed = await banlieue('bootstrap', 'operator', '--wait=false', ...installFlags);
    expect(installed.code, installed.stderr).toBe(0);
  });

  it('refuses --crds while objects of banlieue’s kinds exist, before deleting anything', async () => {
    const result = await banlieue('uninstall', '--crds', '--namespace', installNs);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("warning: --crds deletes every object of banlieue's kinds");
    expect(result.stderr).toMatch(/error: refusing to delete the CRDs while objects of their kinds exist \(.*\d+ VirtualMachine.*\)/);
    expect(result.stdout).toBe('');
    expect(await present(charts.flatMap((c) => c.objects))).toHaveLength(charts.flatMap((c) => c.objects).length);
  });
});
