// The one rule every backend's machine passes keep, as one table of cases each backend's
// peer suite runs (`not-owned.test.ts` in its folder): a VM found by the machine's UUID that
// does not carry the machine's ownership mark (it carries none, or another machine's) is never
// written to, powered, resized or destroyed: not on a first pass, not on a provisioned
// machine's pass, not when status.taskRef names another VM's task, not by a deletion or a
// release. Each suite makes two victim VMs through the backend, strips the mark of one, and
// says how to read everything of a VM a write would change (`snapshot`).
import { describe, expect, it } from 'vitest';
import { isBackendError } from '../../controller/backends/backend-error.js';
import type { Backend, Connection, EnsureOptions, EnsureResult, MachineRequest } from '../../controller/backends/backend.js';
import { silentLogger } from '../../controller/runtime/log.js';
import { StopWaiting, waitFor } from '../support/wait.js';

/** A VM another machine made, or one banlieue's mark was taken from. */
export interface Victim {
  /** The UUID it is found by. */
  readonly uuid: string;
  /** Its backend reference, as an observation would name it. */
  readonly ref: string;
  /** A task that worked on it (its clone, a power task), as a status.taskRef names it. */
  readonly taskRef: string;
}

export type VictimKind = 'carries no mark' | "carries another machine's mark";

export interface NotOwnedWorld<Spec> {
  readonly backend: Backend<Spec>;
  readonly connection: Connection;
  readonly victims: Readonly<Record<VictimKind, Victim>>;
  /**
   * A request of machine `intruder` for `uuid` asking for every change a pass can make: the
   * other power state, more CPUs and memory, user-data.
   */
  intruder(uuid: string, taskRef?: string): MachineRequest<Spec>;
  /** A UUID no VM has. */
  freshUuid(): string;
  /** Everything of the VM a write, power change, resize or deletion would change (its existence too). */
  snapshot(victim: Victim): Promise<unknown>;
}

const log = silentLogger();

const FIRST_PASS: Omit<EnsureOptions, 'log'> = { mayCreate: true, firstBoot: true, specChanged: true };
const PROVISIONED: Omit<EnsureOptions, 'log'> = { mayCreate: false, firstBoot: false, specChanged: true };
const PASSES = [
  ['a first pass', FIRST_PASS],
  ["a provisioned machine's pass", PROVISIONED],
] as const;

/** The outcome of `work`: its result, or what it threw. */
async function outcome<T>(work: () => Promise<T>): Promise<T | { readonly threw: unknown }> {
  try {
    return await work();
  } catch (threw) {
    return { threw };
  }
}

function expectNotOwned(result: unknown): void {
  const threw = typeof result === 'object' && result !== null && 'threw' in result ? result.threw : undefined;
  expect(isBackendError(threw, 'NotOwned'), `expected BackendError NotOwned, got ${threw === undefined ? JSON.stringify(result) : String(threw)}`).toBe(true);
}

/** A pass on the victim's VM that went through is one that observed it as this machine's. */
function expectNotConverged(result: EnsureResult | { readonly threw: unknown }, victim: Victim): void {
  if ('state' in result && result.state === 'Present') expect(result.observation.ref).not.toBe(victim.ref);
}

/** The cases, for the world `world()` returns once the suite's beforeAll has made it. */
export function describeNotOwned<Spec>(backendName: string, world: () => NotOwnedWorld<Spec>): void {
  describe.each<VictimKind>(['carries no mark', "carries another machine's mark"])(`a ${backendName} VM found by UUID that %s`, (kind) => {
    const victim = (): Victim => world().victims[kind];
    const ensure = (request: MachineRequest<Spec>, options: Omit<EnsureOptions, 'log'>): Promise<EnsureResult> =>
      world().backend.machines.ensure(world().connection, request, { ...options, log });

    it.each(PASSES)('is never written to, powered or resized by %s of a machine with its UUID (NotOwned)', async (_pass, options) => {
      const before = await world().snapshot(victim());
      expectNotOwned(await outcome(() => ensure(world().intruder(victim().uuid), options)));
      expect(await world().snapshot(victim())).toEqual(before);
    });

    it.each(PASSES)(
      'is never written to, powered or resized by %s of a machine with its UUID whose taskRef names its task (NotOwned)',
      async (_pass, options) => {
        const before = await world().snapshot(victim());
        expectNotOwned(await outcome(() => ensure(world().intruder(victim().uuid, victim().taskRef), options)));
        expect(await world().snapshot(victim())).toEqual(before);
      },
    );

    it.each(PASSES)('is never taken, written to, powered or resized by %s of another machine whose taskRef names its task', async (_pass, options) => {
      const before = await world().snapshot(victim());
      expectNotConverged(await outcome(() => ensure(world().intruder(world().freshUuid(), victim().taskRef), options)), victim());
      expect(await world().snapshot(victim())).toEqual(before);
    });

    it('is never destroyed by the deletion of a machine with its UUID (NotOwned), nor of one whose taskRef names its task', async () => {
      const before = await world().snapshot(victim());
      const { backend, connection } = world();
      expectNotOwned(await outcome(() => backend.machines.destroy(connection, world().intruder(victim().uuid), { log })));
      await outcome(() => backend.machines.destroy(connection, world().intruder(world().freshUuid(), victim().taskRef), { log }));
      expect(await world().snapshot(victim())).toEqual(before);
    });

    it('is never released by a machine with its UUID (NotOwned)', async () => {
      const before = await world().snapshot(victim());
      const { backend, connection } = world();
      expectNotOwned(await outcome(() => backend.machines.release(connection, world().intruder(victim().uuid, victim().taskRef), { log })));
      expect(await world().snapshot(victim())).toEqual(before);
    });
  });
}

/** Runs `pass` until it reports the VM Present and powered on, each pass carrying the task the one before started. */
export async function untilPresent(
  pass: (taskRef: string | undefined) => Promise<EnsureResult>,
  timeoutMs = 60_000,
): Promise<{ readonly ref: string; readonly taskRefs: readonly string[] }> {
  const taskRefs: string[] = [];
  let taskRef: string | undefined;
  const ref = await waitFor(
    'the VM to be made and powered on',
    async () => {
      const result = await pass(taskRef);
      if (result.state === 'Absent') throw new StopWaiting('the VM was reported Absent while being made');
      taskRef = result.state === 'InProgress' ? result.taskRef : undefined;
      if (taskRef !== undefined && taskRefs.at(-1) !== taskRef) taskRefs.push(taskRef);
      return result.state === 'Present' && result.observation.powerState === 'PoweredOn' ? result.observation.ref : undefined;
    },
    timeoutMs,
  );
  return { ref, taskRefs };
}
