// A Provider says whether a provider role of its class runs, as `kubectl get` shows it: the
// controller's Ready=False NoProviderRole while none does, the role's own Ready (and its failure
// domains counted) once it serves the Provider, NoProviderRole again once it stops and releases
// its Lease. The controller and the proxmox role run as processes against the real API server,
// the role with leader election on a Lease in the test's namespace, the controller watching there.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startRole, type RoleProcess } from '../support/controller-process.js';
import { TestApi, type Obj } from '../support/fixtures.js';
import { createNamespace } from '../support/kube.js';
import { kubectlRow } from '../support/kubectl-table.js';
import { proxmoxWorld, type ProxmoxWorld } from '../support/proxmox/world.js';
import { waitFor } from '../support/wait.js';
import { startProxmoxSim, type ProxmoxSim } from '../sims/proxmox/proxmox-sim.js';

describe('Provider status without and with its provider role', () => {
  const t = new TestApi();
  let ns: string;
  let removeNs: () => Promise<void>;
  let sim: ProxmoxSim;
  let controller: RoleProcess;
  let role: RoleProcess | undefined;

  /** The user's Provider and token Secret, as the Proxmox VM tests write them. */
  const world = (): ProxmoxWorld => proxmoxWorld(ns, sim, 'role');
  const provider = (): Obj => world().provider;
  /** The Provider's row of `kubectl get` once `done` holds for it. */
  const rowWhen = (what: string, done: (row: Record<string, string>) => boolean): Promise<Record<string, string>> =>
    waitFor(
      what,
      async () => {
        const row = await kubectlRow(ns, 'providers.banlieue.io', 'pve');
        return done(row) ? row : undefined;
      },
      90_000,
    );
  const readyMessage = async (): Promise<string> =>
    ((await t.get(provider()))?.status?.conditions as { type: string; message: string }[] | undefined)?.find((c) => c.type === 'Ready')?.message ?? '';

  beforeAll(async () => {
    ({ name: ns, remove: removeNs } = await createNamespace('provider-role'));
    sim = await startProxmoxSim();
    await t.apply(world().secret);
    // The provider roles' Leases are looked for where the controller's would be: here, this test's namespace.
    controller = await startRole([
      'controller',
      '--kubeconfig',
      inject('kubeconfig'),
      '--no-leader-elect',
      '--namespace',
      ns,
      '--leader-election-namespace',
      ns,
    ]);
  }, 120_000);

  afterAll(async () => {
    await role?.stop();
    await controller?.stop();
    await sim?.stop();
    await removeNs?.();
  });

  it('says Ready=False NoProviderRole, naming the role to run, while no role of its class runs', async () => {
    await t.apply(provider());
    const row = await rowWhen('the Provider to say NoProviderRole', (r) => r.REASON === 'NoProviderRole');
    expect(row).toMatchObject({ CLASS: 'proxmox', READY: 'False', DOMAINS: '' });
    expect(await readyMessage()).toBe(
      'no banlieue provider proxmox role is running: run banlieue provider proxmox, or install it (banlieue bootstrap operator --backends with proxmox)',
    );
  });

  it("shows the role's own Ready and its failure domains counted once the role serves it", async () => {
    role = await startRole(['provider', 'proxmox', '--kubeconfig', inject('kubeconfig'), '--namespace', ns, '--leader-election-namespace', ns]);
    const row = await rowWhen("the role's Ready", (r) => r.READY === 'True');
    // The simulator's three nodes, one failure domain each.
    expect(row).toMatchObject({ READY: 'True', REASON: 'Reconciled', DOMAINS: '3' });
    expect(await readyMessage()).toMatch(/^3 failure domains/);
  });

  it('says NoProviderRole again once the role stops and releases its Lease', async () => {
    await role?.stop();
    role = undefined;
    const row = await rowWhen('the Provider to say NoProviderRole again', (r) => r.REASON === 'NoProviderRole');
    expect(row).toMatchObject({ READY: 'False', DOMAINS: '3' });
    expect(await readyMessage()).toBe(
      `the banlieue provider proxmox role is not running (it released its Lease ${ns}/banlieue-provider-proxmox): run banlieue provider proxmox, or install it (banlieue bootstrap operator --backends with proxmox)`,
    );
  });
});
