// vcsim, the govmomi vSphere simulator, as a test peer: built (or found cached)
// by test/tools/build.sh, served on 127.0.0.1 over TLS with a CA made here, so
// clients verify it with a CA bundle exactly as they would a vCenter.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { makeServingFiles } from '../../support/test-pki.js';

export interface VcsimOptions {
  /** @default 2 */
  readonly datacenters?: number;
  /** Clusters per datacenter. @default 2 */
  readonly clusters?: number;
  /** Hosts per cluster. @default 2 */
  readonly hostsPerCluster?: number;
  /** Standalone hosts per datacenter. @default 0 */
  readonly standaloneHosts?: number;
  /** Local datastores, mounted on every host. @default 2 */
  readonly datastores?: number;
  /** Distributed port groups per datacenter. @default 1 */
  readonly portgroups?: number;
  /** VMs per resource pool, named `<cluster>_RP0_VM<n>`, powered on. @default 1 */
  readonly vmsPerPool?: number;
  /** Per-method delays in ms (vcsim -method-delay), e.g. `{ CloneVM_Task: 2000 }`. */
  readonly methodDelayMs?: Readonly<Record<string, number>>;
}

export interface Vcsim {
  /** The SDK endpoint, `https://127.0.0.1:<port>/sdk`. */
  readonly url: string;
  readonly username: string;
  /** The only password vcsim accepts (random per start). */
  readonly password: string;
  /** PEM of the CA that signed vcsim's serving certificate. */
  readonly caPem: string;
  /** Its process, for a bench to read its CPU time. */
  readonly pid: number;
  /** SIGTERM (SIGKILL after 10 s), then remove the certificates. */
  stop(): Promise<void>;
  /**
   * An outage that keeps vcsim's inventory: its state lives only in its memory,
   * so it is frozen (SIGSTOP), not stopped. To a client that is a vCenter that
   * accepts connections and never answers, the unreachable vCenter of a
   * partitioned network. resume() (SIGCONT) ends it.
   */
  pause(): void;
  resume(): void;
}

const LOOPBACK = '127.0.0.1';
const run = promisify(execFile);

/** The vcsim binary from test/tools/build.sh (cached after the first build). */
export async function findVcsim(): Promise<string> {
  const { stdout } = await run('test/tools/build.sh', ['govmomi'], { maxBuffer: 1 << 20, timeout: 30 * 60_000 });
  for (const line of stdout.trim().split('\n')) {
    const [name, , path] = line.split(' ');
    if (name === 'vcsim' && path) return path;
  }
  throw new Error(`test/tools/build.sh govmomi did not report vcsim:\n${stdout}`);
}

export async function startVcsim(options: VcsimOptions = {}): Promise<Vcsim> {
  const binary = await findVcsim();
  const dir = mkdtempSync(join(tmpdir(), 'banlieue-vcsim-'));
  try {
    const tls = await makeServingFiles(dir, 'banlieue-vcsim-ca');
    const username = 'banlieue';
    const password = randomBytes(12).toString('hex');
    const args = [
      // vcsim binds port 0 itself and prints the port it got: no window in which
      // another process can take a port picked beforehand.
      '-l',
      `${LOOPBACK}:0`,
      '-tlscert',
      tls.certFile,
      '-tlskey',
      tls.keyFile,
      '-username',
      username,
      '-password',
      password,
      '-dc',
      String(options.datacenters ?? 2),
      '-cluster',
      String(options.clusters ?? 2),
      '-host',
      String(options.hostsPerCluster ?? 2),
      '-standalone-host',
      String(options.standaloneHosts ?? 0),
      '-ds',
      String(options.datastores ?? 2),
      '-pg',
      String(options.portgroups ?? 1),
      '-vm',
      String(options.vmsPerPool ?? 1),
    ];
    const delays = Object.entries(options.methodDelayMs ?? {});
    if (delays.length > 0) args.push('-method-delay', delays.map(([m, ms]) => `${m}:${ms}`).join(','));
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const port = await announcedPort(child);
    const url = `https://${LOOPBACK}:${port}/sdk`;
    await waitUntilServing(`https://${LOOPBACK}:${port}/about`, tls.caPem, 30_000);
    return {
      url,
      username,
      password,
      caPem: tls.caPem,
      pid: child.pid ?? -1,
      pause: () => void child.kill('SIGSTOP'),
      resume: () => void child.kill('SIGCONT'),
      async stop() {
        // A frozen process does not act on SIGTERM until it runs again.
        child.kill('SIGCONT');
        await stopProcess(child);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/** The port from vcsim's first stdout line, `export GOVC_URL=https://u:p@127.0.0.1:PORT/sdk GOVC_SIM_PID=…`. */
function announcedPort(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => fail(new Error('vcsim did not announce its URL within 60 s')), 60_000);
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /GOVC_URL=(\S+)/.exec(stdout);
      if (match?.[1] === undefined) return;
      clearTimeout(timer);
      child.off('exit', onExit);
      resolve(Number(new URL(match[1]).port));
    });
    child.on('exit', onExit);
    child.on('error', fail);
    function onExit(code: number | null): void {
      fail(new Error(`vcsim exited (${code}) before serving:\n${stderr}`));
    }
    function fail(error: Error): void {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(error);
    }
  });
}

/** Polls `url` until it answers 200, verifying TLS with `caPem`. */
async function waitUntilServing(url: string, caPem: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      if ((await getStatus(url, caPem)) === 200) return;
    } catch (error) {
      last = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`vcsim at ${url} not serving within ${timeoutMs} ms: ${String(last)}`);
}

function getStatus(url: string, ca: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca, timeout: 2_000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
