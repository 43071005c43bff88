// A length of time as a command takes it, apart from the commands that use it:
// the CLI defines its options without loading what the commands run.

/** A length of time and how the user wrote it. */
export interface Duration {
  readonly ms: number;
  readonly text: string;
}

/** How long `bootstrap operator --wait` waits for the rollouts: longer than a Deployment's default progress deadline (600 s), so that its own verdict comes first. */
export const DEFAULT_ROLLOUT_TIMEOUT: Duration = { ms: 15 * 60_000, text: '15m' };
