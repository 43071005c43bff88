// A provider role's sweep of what deleted machines left on its backend
// (Backend.sweep, optional): once the caches are full, then every period. The
// role judges each mark from its machine cache, read at the moment the backend
// asks: a mark of a kind or namespace the role does not watch is Foreign and
// never swept.
import type { MachineOwner } from '../backends/ownership.js';
import type { MarkJudgement } from '../backends/backend.js';
import type { RunningBackend } from '../backends/descriptor.js';
import { sleep } from '../runtime/backoff.js';
import type { Logger } from '../runtime/log.js';

export interface SweepOptions {
  /** Whether the machine `namespace/name` is in the role's cache. */
  readonly exists: (key: string) => boolean;
  /** The namespace the role watches; unset: all. */
  readonly namespace?: string;
  readonly everyMs: number;
  readonly log: Logger;
  readonly signal: AbortSignal;
}

/** Judges a mark: its machine is in the cache (Owned), gone (Orphaned), or not the role's to judge (Foreign). */
export function judgeMark(kind: string, namespace: string | undefined, exists: (key: string) => boolean): (owner: MachineOwner) => MarkJudgement {
  return (owner) => {
    if (owner.kind !== kind || (namespace !== undefined && owner.namespace !== namespace)) return 'Foreign';
    return exists(`${owner.namespace}/${owner.name}`) ? 'Owned' : 'Orphaned';
  };
}

/** Runs the backend's sweep until the role stops; a failed sweep is logged and tried again next period. */
export async function runSweeps(backend: RunningBackend, options: SweepOptions): Promise<void> {
  const { sweep } = backend;
  if (!sweep) return;
  const judge = judgeMark(backend.api.machine.kind, options.namespace, options.exists);
  while (!options.signal.aborted) {
    try {
      await sweep(judge, options.log, options.signal);
    } catch (error) {
      if (options.signal.aborted) return;
      options.log.warn({ backend: backend.name, err: (error as Error).message }, 'Sweeping what deleted machines left failed');
    }
    await sleep(options.everyMs, options.signal);
  }
}
