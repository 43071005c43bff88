// Something the run does over and over beside its plan (play the guests,
// check the fleet), one round at a time, `periodMs` apart. Paused while the
// peer is frozen: a round that reads the peer would hang on it.
import { setTimeout as delay } from 'node:timers/promises';

export class Rounds {
  private stopped = false;
  private paused = false;
  private idle: Promise<void> = Promise.resolve();

  /** `round` undefined: nothing to do (a world whose peer plays its own guests). */
  constructor(
    private readonly round: (() => Promise<void>) | undefined,
    private readonly periodMs: number,
  ) {}

  /** Until stop(); resolves once the last round ended. */
  async run(): Promise<void> {
    const round = this.round;
    if (!round) return;
    while (!this.stopped) {
      if (!this.paused) {
        // The API server may be down: the round fails and the next one tries again.
        this.idle = round().catch(() => undefined);
        await this.idle;
      }
      await delay(this.periodMs);
    }
  }

  /** Resolves once no round is under way. */
  async pause(): Promise<void> {
    this.paused = true;
    await this.idle;
  }

  resume(): void {
    this.paused = false;
  }

  stop(): void {
    this.stopped = true;
  }
}
