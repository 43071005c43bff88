// One GET for the passes that read the same object within a moment of each
// other: the Provider's credentials Secret every machine's connection reads, a
// machine's own CAPI Machine and bootstrap Secret in passes that follow one
// another. A burst of N machines then costs a GET of each shared object per
// second, not N. The answer (a 404 too) serves the passes that ask while its
// GET is in flight and within `ttlMs` of it; an error serves none after it.
// Still a get by name, never a list or a watch (RBAC grants only get on
// Secrets), and nothing is kept longer: a rotated Secret is seen by every pass
// that starts ttlMs after the change. With ttlMs 0 passes only join a GET in
// flight (the CAPI Cluster of the pause check, which must be seen at once).
// Callers share the object they are given: they read it, never change it.
import { ApiStatusError, type KubeApi, type ObjectRef } from './kube-api.js';

/** What reads one object by name: the KubeApi itself, or SharedReads in front of it. */
export type ObjectReader = Pick<KubeApi, 'get'>;

/** No longer than the shortest poll period (1 s), so a pass that polls reads afresh. */
export const SHARED_READ_TTL_MS = 1_000;

interface Answer {
  readonly value: Promise<unknown>;
  /** When the GET answered (performance.now()); undefined while it is in flight. */
  answeredAt?: number;
}

export class SharedReads implements ObjectReader {
  private readonly answers = new Map<string, Answer>();

  constructor(
    private readonly api: ObjectReader,
    private readonly ttlMs = SHARED_READ_TTL_MS,
  ) {}

  get<T>(ref: ObjectRef): Promise<T> {
    const key = JSON.stringify([ref.apiVersion, ref.kind, ref.metadata.namespace ?? '', ref.metadata.name ?? '']);
    const known = this.answers.get(key);
    if (known && (known.answeredAt === undefined || performance.now() - known.answeredAt < this.ttlMs)) return known.value as Promise<T>;
    const answer: Answer = { value: this.api.get<T>(ref) };
    this.answers.set(key, answer);
    const forget = (): void => {
      if (this.answers.get(key) === answer) this.answers.delete(key);
    };
    const keep = (): void => {
      answer.answeredAt = performance.now();
      // Only to free the memory: whether an answer still serves is decided by answeredAt.
      setTimeout(forget, this.ttlMs).unref();
    };
    answer.value.then(keep, (err: unknown) => (err instanceof ApiStatusError && err.code === 404 ? keep() : forget()));
    return answer.value as Promise<T>;
  }
}
