// A graceful power-off spread over passes, as backends whose guests take a shutdown request make
// it: the guest is asked (ACPI, VMware Tools), when is remembered, and the VM is stopped hard only
// once the grace period is over; no pass waits for the guest. What is remembered lives in the
// provider's memory: a restarted provider asks again and the period starts again, never shorter.
import type { PowerState } from '../../../../infra/api/machine-fields.js';

/** How long a guest asked to shut down may take before the VM is stopped hard. */
export const SHUTDOWN_GRACE_MS = 60_000;

/** When the guest of each machine (by UUID) was asked to shut down, in this process. */
export class ShutdownRequests {
  private readonly since = new Map<string, number>();

  /** When the guest was asked; undefined when it was not (or the request is over). */
  sinceOf(uuid: string): number | undefined {
    return this.since.get(uuid);
  }

  asked(uuid: string, now: number): void {
    this.since.set(uuid, now);
  }

  forget(uuid: string): void {
    this.since.delete(uuid);
  }

  /** A shutdown asked for earlier no longer counts once the VM is wanted on (or suspended). */
  settle(uuid: string, desired: PowerState): void {
    if (desired !== 'PoweredOff') this.since.delete(uuid);
  }

  /** Whether the guest of `uuid` was asked and its grace period is over at `now`. */
  isOver(uuid: string, now: number): boolean {
    const since = this.since.get(uuid);
    return since !== undefined && now - since >= SHUTDOWN_GRACE_MS;
  }
}

/** What a machine's status says while its guest shuts down: `stopped` says what happens at the deadline. */
export function shutdownNote(since: number, now: number, stopped: string): string {
  return `the guest was asked to shut down; ${stopped} if it still runs ${Math.round((since + SHUTDOWN_GRACE_MS - now) / 1000)} s from now`;
}
