// Secret hygiene: values planted in Secrets (the vCenter password, a wrong one,
// user-data, the CA bundles) never appear in what operators and users read: the
// roles' logs, Events, the status of every banlieue object, health and
// /metrics. A full run on the default install with both roles as their
// ServiceAccounts and vcsim as the vCenter: a Provider Ready, a VM created,
// Ready, powered off and deleted, and failures on the way (a wrong password, a
// CA that did not sign the endpoint, a missing user-data key) so that errors,
// conditions and Warning Events are produced. The user-data legitimately
// reaches the guest (vcsim is not scanned).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_KINDS } from '../../infra/api/kinds.js';
import { makeServingFiles } from '../support/test-pki.js';
import { TestApi, machineRef, vm, type Obj } from '../support/fixtures.js';
import { startInstalledVsphereEnv } from '../support/vsphere/installed-env.js';
import { clusterAdmin, kubectlAs } from '../support/tenant.js';
import { providerIdOf, readyWithAddress, stopVsphereEnv, type VsphereEnv } from '../support/vsphere/env.js';

const t = new TestApi();
const hex = (): string => Math.random().toString(16).slice(2, 10);

/** The 64-character base64 lines of a PEM: any one of them in a text means the PEM leaked. */
const pemLines = (pem: string): string[] => pem.split('\n').filter((l) => l.length === 64 && !l.startsWith('-----'));

/** How a planted value can show up: as written, base64 as in a Secret's data, JSON-escaped in a log line. */
function forms(value: string): string[] {
  return [...new Set([value, Buffer.from(value, 'utf8').toString('base64'), JSON.stringify(value).slice(1, -1)])];
}

describe('Secret hygiene over a full run (default install, both roles, vcsim)', () => {
  let env: VsphereEnv;
  let ns: string;
  let otherCaPem: string;
  const WRONG_PASSWORD = `wrong-vcenter-password-${hex()}${hex()}`;
  const USER_DATA_MARKER = `user-data-marker-${hex()}${hex()}`;
  const SPARE_MARKER = `unused-secret-key-${hex()}${hex()}`;
  const userData = `#cloud-config\nwrite_files: [{path: /etc/marker, content: ${USER_DATA_MARKER}}]\nhostname: \${HOSTNAME}\n`;

  const creds = (password: string): Obj => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'vcsim-creds', namespace: ns },
    stringData: { username: env.vcsim.username, password },
  });
  const web = (spec: Record<string, unknown> = {}): Obj =>
    vm(ns, 'web', env.world.vmClass.metadata.name, env.world.vmImage.metadata.name, { userData: { secretRef: { name: 'web-cloud-init' } }, ...spec });

  /** Every value planted in a Secret during the run, by what it is. */
  const planted = (): Record<string, string[]> => ({
    'the vCenter password': forms(env.vcsim.password),
    'the wrong vCenter password': forms(WRONG_PASSWORD),
    'the user-data': [...forms(userData), USER_DATA_MARKER],
    'an unused key of the user-data Secret': forms(SPARE_MARKER),
    "the vCenter's CA bundle": pemLines(env.vcsim.caPem),
    'the other CA bundle': pemLines(otherCaPem),
  });

  beforeAll(async () => {
    // --resync-period 2: converged machines are read again often, so failures show soon.
    env = await startInstalledVsphereEnv('hygiene', { caFromSecret: true, providerFlags: ['--resync-period', '2'] });
    ns = env.ns;
    const dir = mkdtempSync(join(tmpdir(), 'banlieue-other-ca-'));
    try {
      otherCaPem = (await makeServingFiles(dir, 'someone-else')).caPem;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(pemLines(env.vcsim.caPem).length).toBeGreaterThan(0);
    expect(pemLines(otherCaPem).length).toBeGreaterThan(0);
  }, 300_000);

  afterAll(() => stopVsphereEnv(env), 180_000);

  it('runs a VM through its life: Ready with its user-data, powered off, then deleted while the password is wrong, and gone once it is right', async () => {
    await t.apply({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'web-cloud-init', namespace: ns },
      stringData: { 'user-data': userData, spare: SPARE_MARKER },
    });
    await t.apply(web());
    await readyWithAddress(env, 'web', '10.70.0.10', 90_000);
    const uuid = await providerIdOf(ns, 'web');

    await t.apply(web({ desiredPowerState: 'PoweredOff' }));
    await t.exists(web(), (o) => o.status?.observedPowerState === 'PoweredOff', 60_000);

    // The password rotated to a wrong one: the Provider and the machine fail to log in, and say so.
    await t.apply(creds(WRONG_PASSWORD));
    await t.condition(env.world.provider, 'ProviderReachable', 'False', 'ConnectFailed', 60_000);
    await t.apply(web({ desiredPowerState: 'PoweredOn' }));
    await t.condition(machineRef('vsphere', ns, 'web'), 'Ready', 'False', 'ConnectFailed', 60_000);
    await t.delete(web());
    await t.condition(machineRef('vsphere', ns, 'web'), 'Ready', 'False', 'DeletionFailed', 60_000);

    await t.apply(creds(env.vcsim.password));
    await t.condition(env.world.provider, 'ProviderReachable', 'True', undefined, 60_000);
    await t.gone(web(), 120_000);
    expect(await env.client.search.findVmByBiosUuid(uuid)).toBeUndefined();
  }, 300_000);

  it('reports a CA that did not sign the endpoint and a missing user-data key as conditions', async () => {
    await t.apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'other-ca', namespace: ns }, stringData: { 'ca.crt': otherCaPem } });
    const wrongCa: Obj = {
      ...env.world.provider,
      metadata: { name: 'vcsim-other-ca', namespace: ns },
      spec: { ...env.world.provider.spec, connection: { ...env.world.provider.spec?.connection, caBundle: { secretRef: { name: 'other-ca' } } } },
    };
    await t.apply(wrongCa);
    await t.condition(wrongCa, 'ProviderReachable', 'False', 'ConnectFailed', 60_000);

    const noKey = vm(ns, 'no-key', env.world.vmClass.metadata.name, env.world.vmImage.metadata.name, {
      userData: { secretRef: { name: 'web-cloud-init', key: 'nope' } },
    });
    await t.apply(noKey);
    const blocked = await t.condition(noKey, 'Scheduled', 'False', 'UserDataNotFound', 60_000);
    expect((blocked.status?.conditions as { type: string; message: string }[]).find((c) => c.type === 'Scheduled')?.message).toBe(
      'Secret web-cloud-init has no key "nope"',
    );
    await t.delete(noKey);
    await t.gone(noKey, 60_000);
  }, 180_000);

  describe('after the run', () => {
    const sources = new Map<string, string>();

    beforeAll(async () => {
      sources.set('controller log', env.controller.logs());
      sources.set('provider log', env.provider.logs());
      const events = await kubectlAs(clusterAdmin, ['get', 'events', '-A', '-o', 'json']);
      expect(events.code, events.stderr).toBe(0);
      sources.set('Events (all namespaces)', events.stdout);
      const kinds = ALL_KINDS.map((k) => `${k.plural}.${k.group}`).join(',');
      const objects = await kubectlAs(clusterAdmin, ['get', kinds, '-A', '-o', 'json']);
      expect(objects.code, objects.stderr).toBe(0);
      sources.set('banlieue objects (all kinds, all namespaces)', objects.stdout);
      for (const [name, role] of [
        ['controller', env.controller],
        ['provider', env.provider],
      ] as const) {
        const metrics = await fetch(`http://127.0.0.1:${role.metricsPort}/metrics`);
        sources.set(`${name} /metrics`, await metrics.text());
        for (const path of ['/livez', '/readyz']) sources.set(`${name} ${path}`, (await role.health(path))[1]);
      }
    }, 60_000);

    it('has read what it scans: the run logged, recorded Events and conditions, and counted vCenter calls', () => {
      expect(sources.get('provider log')).toContain('CloneVM_Task started');
      expect(sources.get('controller log')?.length).toBeGreaterThan(0);
      const events = JSON.parse(sources.get('Events (all namespaces)') ?? '{}') as { items: { reason: string; involvedObject: { namespace?: string } }[] };
      const reasons = events.items.filter((e) => e.involvedObject.namespace === ns).map((e) => e.reason);
      expect(reasons).toEqual(expect.arrayContaining(['Created', 'PoweredOff', 'ConnectFailed', 'DeletionFailed']));
      expect(sources.get('banlieue objects (all kinds, all namespaces)')).toContain('ConnectFailed');
      expect(sources.get('provider /metrics')).toContain('banlieue_backend_calls_total');
      expect(sources.get('controller /metrics')).toContain('# TYPE');
    });

    it('would see a planted value that leaked: the Secrets holding them, read the same way, are caught', async () => {
      const secrets = await kubectlAs(clusterAdmin, ['get', 'secrets', '-n', ns, '-o', 'json']);
      expect(secrets.code, secrets.stderr).toBe(0);
      const values = planted();
      for (const what of ['the vCenter password', 'the user-data', 'an unused key of the user-data Secret']) {
        expect(
          values[what]?.some((v) => secrets.stdout.includes(v)),
          what,
        ).toBe(true);
      }
    });

    it('finds no planted Secret value in logs, Events, banlieue objects, health or /metrics', () => {
      const found: string[] = [];
      for (const [what, values] of Object.entries(planted())) {
        for (const [source, text] of sources) {
          if (values.some((v) => text.includes(v))) found.push(`${what} in the ${source}`);
        }
      }
      expect(found).toEqual([]);
    });
  });
});
