// The session pool against a real vcsim: passes share one login, a wrong
// password is not kept and logs no other session out, idle sessions and shutdown log out (vcsim's
// SessionManager.sessionList shows what the server holds).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Connection } from '../../../controller/backends/backend.js';
import { type VsphereClient } from '../../../controller/backends/vsphere/client/vsphere-client.js';
import { withSignal } from '../../../controller/backends/cancellation.js';
import { vsphereSessions } from '../../../controller/backends/vsphere/sessions.js';
import { PACKAGE_VERSION } from '../../../infra/version.js';
import { waitFor } from '../../support/wait.js';
import { vcsimClient } from '../../support/vsphere/world.js';
import { startVcsim, type Vcsim } from './vcsim.js';

let sim: Vcsim;
let observer: VsphereClient;
let connection: Connection;

beforeAll(async () => {
  sim = await startVcsim({ datacenters: 1, clusters: 1 });
  observer = await vcsimClient(sim);
  connection = { endpoint: sim.url, credentials: { username: sim.username, password: sim.password }, caPem: sim.caPem, insecureSkipTLSVerify: false };
});

afterAll(async () => {
  await observer?.close();
  await sim?.stop();
});

/** Keys of the sessions vcsim holds, besides the observer's own. */
async function serverSessionKeys(): Promise<string[]> {
  const content = await observer.properties.retrieveOne(observer.session.serviceContent.sessionManager, ['sessionList']);
  const keys = (content.props.get('sessionList')?.childrenNamed('UserSession') ?? []).map((s) => s.childText('key') ?? '');
  return keys.filter((k) => k !== observer.session.key);
}

const serverSessions = async (): Promise<number> => (await serverSessionKeys()).length;

describe('vSphere session pool', () => {
  it('runs many passes, concurrent or not, on one login, and logs it out on closeAll', async () => {
    const pool = vsphereSessions();
    const keys = new Set<string | undefined>();
    for (let i = 0; i < 3; i++) await pool.use(connection, async (client) => void keys.add(client.session.key));
    await Promise.all(
      Array.from({ length: 5 }, () => pool.use(connection, async (client) => void keys.add((await client.inventory.datacenters()) && client.session.key))),
    );

    expect(keys.size).toBe(1);
    expect(await serverSessions()).toBe(1);
    await pool.closeAll();
    expect(await serverSessions()).toBe(0);
  });

  it("names banlieue and its version as the session's User-Agent, as vCenter's session list shows it", async () => {
    const pool = vsphereSessions();
    try {
      const key = await pool.use(connection, async (client) => client.session.key);
      const content = await observer.properties.retrieveOne(observer.session.serviceContent.sessionManager, ['sessionList']);
      const session = (content.props.get('sessionList')?.childrenNamed('UserSession') ?? []).find((s) => s.childText('key') === key);
      expect(session?.childText('userAgent')).toBe(`banlieue/${PACKAGE_VERSION}`);
    } finally {
      await pool.closeAll();
    }
  });

  it('lets a pass with a deadline stop waiting for a login a frozen vCenter does not answer, without failing the login for the other passes', async () => {
    const pool = vsphereSessions();
    sim.pause();
    try {
      // The pass with a deadline asks first: the login it sets off must not carry its deadline.
      const hurried = withSignal(AbortSignal.timeout(1_000), () => pool.use(connection, async (client) => client.session.key));
      const patient = pool.use(connection, async (client) => client.session.key);
      const outcome = await Promise.race([
        hurried.then(
          () => 'answered',
          () => 'gave up',
        ),
        new Promise((resolve) => setTimeout(() => resolve('still waiting'), 60_000).unref()),
      ]);
      expect(outcome).toBe('gave up');
      sim.resume();
      expect(await patient).toEqual(expect.any(String));
      expect(await serverSessions()).toBe(1);
    } finally {
      sim.resume();
      await pool.closeAll();
    }
  });

  it('keeps no session for refused credentials, and logs in with the right ones next time', async () => {
    const pool = vsphereSessions();
    const wrong = { ...connection, credentials: { username: sim.username, password: 'wrong' } };
    await expect(pool.use(wrong, async () => 'unreached')).rejects.toMatchObject({ kind: 'Unauthorized' });
    expect(pool.size).toBe(0);

    expect(await pool.use(connection, async (client) => client.about.apiType)).toBe('VirtualCenter');
    expect(pool.size).toBe(1);
    await pool.closeAll();
  });

  it("keeps the session of an admin's credentials when a tenant's Provider names the same endpoint and user with a wrong password", async () => {
    const pool = vsphereSessions();
    try {
      const admin = await pool.use(connection, async (client) => client.session.key);
      // A tenant's Provider: the admin's endpoint and username, a password guessed wrong, one pass after another.
      const guessed = { ...connection, credentials: { username: sim.username, password: 'guessed' } };
      for (let pass = 0; pass < 3; pass++) await expect(pool.use(guessed, async () => 'unreached')).rejects.toMatchObject({ kind: 'Unauthorized' });
      expect(await pool.use(connection, async (client) => client.session.key), "the admin's passes go on in the session they had").toBe(admin);
      expect(await serverSessionKeys(), 'vcsim holds that one session, never logged out').toEqual([admin]);
    } finally {
      await pool.closeAll();
    }
  });

  it('logs a rotated-away session out when the credentials change', async () => {
    const pool = vsphereSessions();
    try {
      const before = await pool.use(connection, async (client) => client.session.key);
      // Same user, another CA bundle string (a rotation): a new session, the old one ends.
      const after = await pool.use({ ...connection, caPem: `${sim.caPem}\n` }, async (client) => client.session.key);
      expect(before).toBeDefined();
      expect(after).toBeDefined();
      expect(after, 'the rotated credentials log in anew').not.toBe(before);
      expect(pool.size).toBe(1);
      // vcsim holds the new session only: the old one was logged out, not left to expire.
      await waitFor('the old session to be logged out', async () => ((await serverSessionKeys()).join() === after ? true : undefined), 60_000);
    } finally {
      await pool.closeAll();
    }
  });

  it('logs out a session idle for longer than idleMs', async () => {
    const pool = vsphereSessions({ idleMs: 200 });
    await pool.use(connection, async () => undefined);
    expect(await serverSessions()).toBe(1);
    await waitFor('the idle session to be logged out', async () => ((await serverSessions()) === 0 ? true : undefined), 60_000);
    expect(pool.size).toBe(0);
  });
});
