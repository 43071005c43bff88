// The two VMMs the Cloud Hypervisor suites run against, behind one shape: the simulator
// (always) and the real cloud-hypervisor binary named by CLOUD_HYPERVISOR_BIN (root
// only: it opens /dev/kvm). Each is an executable taking `--api-socket path=…`, so the
// supervision code starts either; the simulator's is a generated `#!/bin/sh` wrapper.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { VmmClient } from '../../../controller/backends/cloud-hypervisor/client/vmm-client.js';
import { programBundle } from '../../support/bundles.js';
import { waitFor } from '../../support/wait.js';
import type { Violation } from '../../sims/cloud-hypervisor/vmm-server.js';

export const REAL_VMM_ENV = 'CLOUD_HYPERVISOR_BIN';

export interface VmmPeer {
  readonly name: 'simulator' | 'cloud-hypervisor';
  /** False for the real VMM when CLOUD_HYPERVISOR_BIN is unset or we are not root: its suites skip. */
  readonly available: boolean;
  /** Writes (for the simulator) or names the executable; `dir` is the test's temp dir. */
  binary(dir: string, options?: SimulatorOptions): string;
}

export interface SimulatorOptions {
  /** vmm.ping's version. @default '53.0.0' */
  readonly version?: string;
  /** @default 'halt' */
  readonly guest?: 'acpi' | 'halt';
  /** Per-operation answer delays, e.g. `{ 'vm.boot': 5000 }`. */
  readonly delaysMs?: Readonly<Record<string, number>>;
}

/** The real binary, when the environment names one and we may run it; else undefined. */
export function realVmmBinary(): string | undefined {
  const binary = process.env[REAL_VMM_ENV];
  if (binary === undefined || binary === '') return undefined;
  return process.getuid?.() === 0 ? binary : undefined;
}

/** Says loudly why the real-VMM runs of `suite` are skipped; returns true when they are. */
export function skipsRealVmm(suite: string): boolean {
  if (realVmmBinary() !== undefined) return false;
  const why = process.env[REAL_VMM_ENV] ? 'it runs as root only' : `${REAL_VMM_ENV} is not set`;
  console.warn(`\n*** ${suite}: SKIPPED against the real cloud-hypervisor: ${why} (set ${REAL_VMM_ENV} to a v53+ binary and run as root) ***\n`);
  return true;
}

export const simulatorPeer: VmmPeer = {
  name: 'simulator',
  available: true,
  binary: (dir, options = {}) => writeSimulatorBinary(dir, options),
};

export const realPeer: VmmPeer = {
  name: 'cloud-hypervisor',
  available: realVmmBinary() !== undefined,
  binary: () => {
    const binary = realVmmBinary();
    if (binary === undefined) throw new Error(`${REAL_VMM_ENV} is not usable`);
    return binary;
  },
};

/** The peers every suite runs against (`describe.skipIf(!peer.available)`). */
export const VMM_PEERS: readonly VmmPeer[] = [simulatorPeer, realPeer];

/** The file the simulator started by `binary(dir)` records its violations in. */
export function violationsFile(dir: string): string {
  return join(dir, 'sim-violations.jsonl');
}

export function readViolations(dir: string): Violation[] {
  let text: string;
  try {
    text = readFileSync(violationsFile(dir), 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Violation);
}

/** Writes `<dir>/cloud-hypervisor-sim`, a wrapper that execs node on the simulator (so its pid is the simulator's). */
export function writeSimulatorBinary(dir: string, options: SimulatorOptions = {}): string {
  const entry = fileURLToPath(new URL('../../sims/cloud-hypervisor/main.ts', import.meta.url));
  // Bundled (not run through tsx: seconds of CPU per VMM); the one module reading a file beside it is the spec's.
  const program = programBundle(entry, fileURLToPath(new URL('../../fixtures/cloud-hypervisor/openapi.ts', import.meta.url)));
  const simArgs = ['--sim-version', options.version ?? '53.0.0', '--sim-guest', options.guest ?? 'halt', '--sim-violations', violationsFile(dir)];
  for (const [operation, ms] of Object.entries(options.delaysMs ?? {})) simArgs.push('--sim-delay', `${operation}=${ms}`);
  const path = join(dir, 'cloud-hypervisor-sim');
  const command = [process.execPath, program, ...simArgs].map(shellQuote).join(' ');
  writeFileSync(path, `#!/bin/sh\nexec ${command} "$@"\n`);
  chmodSync(path, 0o755);
  return path;
}

/** A VMM run as a plain child of the test (not through the supervision code). */
export interface ChildVmm {
  readonly child: ChildProcess;
  logs(): string;
  /** SIGKILL and wait. */
  kill(): Promise<void>;
  /** Resolves with the exit code. */
  readonly exited: Promise<number | null>;
}

/** Starts `binary --api-socket path=<socket> …args` and waits until the socket accepts a ping. */
export async function launchVmm(binary: string, socketPath: string, args: readonly string[] = []): Promise<ChildVmm> {
  const child = spawn(binary, ['--api-socket', `path=${socketPath}`, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const vmm: ChildVmm = {
    child,
    exited,
    logs: () => output,
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
  try {
    await waitFor(
      `${binary} to serve ${socketPath}`,
      async () => {
        if (child.exitCode !== null) throw new Error(`exited ${child.exitCode}:\n${output}`);
        await new VmmClient({ socketPath, timeoutMs: 5_000 }).ping();
        return true;
      },
      60_000,
    );
  } catch (error) {
    await vmm.kill();
    throw error;
  }
  return vmm;
}

/** The pids of running processes whose command line mentions `text` (e.g. a temp root). */
export function processesMentioning(text: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(text)) pids.push(Number(entry));
    } catch {
      // Gone while we looked.
    }
  }
  return pids;
}

function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}
