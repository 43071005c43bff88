// Cleanup for a bench run: what was started is stopped, last first, exactly
// once — after the case, on its failure, or on SIGINT/SIGTERM.

interface Step {
  readonly what: string;
  readonly run: () => Promise<unknown>;
}

export class Teardown {
  private readonly steps: Step[] = [];
  private running: Promise<void> | undefined;

  /** Register a cleanup; when teardown already began (a signal mid set-up), it runs now. */
  defer(what: string, run: () => Promise<unknown>): void {
    if (this.running) {
      this.running = this.running.then(() => Teardown.runStep({ what, run }));
      return;
    }
    this.steps.push({ what, run });
  }

  /** Run every step once, last registered first; a failing step is reported and the rest still run. */
  run(): Promise<void> {
    this.running ??= (async () => {
      for (const step of this.steps.reverse()) await Teardown.runStep(step);
    })();
    return this.running;
  }

  private static async runStep(step: Step): Promise<void> {
    try {
      await step.run();
    } catch (err) {
      process.stderr.write(`teardown: ${step.what}: ${err instanceof Error ? err.message : String(err)}\n`);
    }
  }
}
