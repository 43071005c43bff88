// Two replicas of one role with leader election, kept running as a
// Deployment's pods are: a replica that exits — killed by the fault run, or
// ending itself after losing its Lease — is started again. Each replica runs
// as its own API user, so the audit log tells the replicas apart; each process
// has its own Lease identity (`<user>-<n>`), as a new pod has a new name, so a
// restarted replica does not take its dead predecessor's Lease as its own.
import { setTimeout as delay } from 'node:timers/promises';
import { startRole, type RoleProcess } from '../support/controller-process.js';
import { tail } from '../bench/bench-stats.js';
import type { Role } from './fault-plan.js';

/** A restarted pod's back-off, short: the run is bounded. */
const RESTART_AFTER_MS = 1_000;
/** A start on a busy 2-core machine: generous, whatever the machine runs beside the run. */
export const START_TIMEOUT_MS = 240_000;

interface Slot {
  readonly user: string;
  /** Processes started in this slot so far. */
  starts: number;
  process: RoleProcess | undefined;
  /** The replacement being started, once this slot's process exited. */
  starting: Promise<void> | undefined;
  /** Output of every process this slot ran, earlier ones first. */
  pastLogs: string;
}

export interface ReplicaExit {
  readonly user: string;
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** The fault run killed it. */
  readonly killed: boolean;
}

export class RoleReplicas {
  private readonly slots: Slot[];
  private stopping = false;
  private readonly killing = new Set<RoleProcess>();
  readonly exits: ReplicaExit[] = [];

  /** `argsOf(user, identity)`: the role's command line for a process that runs as `user` with Lease identity `identity`; `env` added to its environment. */
  constructor(
    readonly role: Role,
    users: readonly string[],
    private readonly argsOf: (user: string, identity: string) => string[],
    private readonly env: Readonly<Record<string, string>> = {},
  ) {
    this.slots = users.map((user) => ({ user, starts: 0, process: undefined, starting: undefined, pastLogs: '' }));
  }

  get users(): string[] {
    return this.slots.map((s) => s.user);
  }

  async start(): Promise<void> {
    await Promise.all(this.slots.map((slot) => this.startSlot(slot)));
  }

  /** The user of the replica whose /readyz says `readiness` ('leader', 'standby'), if one does. */
  async replicaThatIs(readiness: 'leader' | 'standby'): Promise<string | undefined> {
    for (const slot of this.slots) {
      try {
        if (slot.process && (await slot.process.health('/readyz'))[1] === readiness) return slot.user;
      } catch {
        // Exited or not serving yet: not it.
      }
    }
    return undefined;
  }

  /**
   * kill -9 the replica that is `target` now (the other one when none is, e.g.
   * a standby still waiting for the Lease). Its replacement starts in the
   * background, as a restarted pod would; only when no replica of the role
   * serves does this wait, for one to aim at. The user of the replica killed.
   */
  async kill(target: 'leader' | 'standby'): Promise<string> {
    await waitUntilDefined(() => this.slots.find((s) => s.process !== undefined));
    const user = (await this.replicaThatIs(target)) ?? (await this.replicaThatIs(target === 'leader' ? 'standby' : 'leader'));
    const slot = this.slots.find((s) => s.user === user) ?? this.slots.find((s) => s.process !== undefined);
    const victim = slot?.process;
    if (!slot || !victim) throw new Error(`no ${this.role} replica to kill`);
    this.killing.add(victim);
    await victim.kill();
    return slot.user;
  }

  /** Every replica's whole output (current and past processes), one section per replica. */
  logs(): string {
    return this.slots.map((s) => `--- ${this.role} ${s.user} ---\n${s.pastLogs}${s.process?.logs() ?? ''}`).join('\n');
  }

  /** The tail of every replica's output (current and past processes). */
  logTails(lines = 40): string {
    return this.slots.map((s) => `--- ${this.role} ${s.user} ---\n${tail(s.pastLogs + (s.process?.logs() ?? ''), lines)}`).join('\n');
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.slots.map((s) => s.starting));
    await Promise.all(
      this.slots.map(async (s) => {
        const p = s.process;
        if (!p) return;
        const timer = setTimeout(() => void p.kill(), 10_000);
        await p.stop();
        clearTimeout(timer);
      }),
    );
  }

  private async startSlot(slot: Slot): Promise<void> {
    for (;;) {
      try {
        slot.starts += 1;
        const process = await startRole(this.argsOf(slot.user, `${slot.user}-${slot.starts}`), { startTimeoutMs: START_TIMEOUT_MS, env: this.env });
        slot.process = process;
        process.child.once('exit', (code, signal) => this.onExit(slot, process, code, signal));
        return;
      } catch (err) {
        // Exited before serving (e.g. the API server was down): a pod would be restarted too.
        slot.pastLogs += `${err instanceof Error ? err.message : String(err)}\n`;
        if (this.stopping) return;
        await delay(RESTART_AFTER_MS);
      }
    }
  }

  private onExit(slot: Slot, process: RoleProcess, code: number | null, signal: NodeJS.Signals | null): void {
    const killed = this.killing.delete(process);
    this.exits.push({ user: slot.user, code, signal, killed });
    slot.pastLogs += process.logs();
    slot.process = undefined;
    if (this.stopping) return;
    slot.starting = (async () => {
      await delay(RESTART_AFTER_MS);
      await this.startSlot(slot);
    })().finally(() => (slot.starting = undefined));
  }
}

async function waitUntilDefined<T>(read: () => T | undefined): Promise<T> {
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    await delay(20);
  }
}
