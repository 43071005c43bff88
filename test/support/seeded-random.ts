// A small seeded PRNG (mulberry32) for tests that must be random and yet
// reproducible: the same seed gives the same sequence on every machine, so a
// failing fault run is replayed by passing its printed seed back.

export class SeededRandom {
  private state: number;

  constructor(readonly seed: number) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max], both included. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** One element of a non-empty list. */
  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new Error('pick from an empty list');
    return item;
  }

  /** `count` distinct elements, in a seeded order (a partial Fisher–Yates shuffle). */
  sample<T>(items: readonly T[], count: number): T[] {
    const copy = [...items];
    for (let i = 0; i < Math.min(count, copy.length); i++) {
      const j = this.int(i, copy.length - 1);
      [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
    }
    return copy.slice(0, count);
  }
}

/** The seed from `name` in the environment (a non-negative integer), or `fallback`. */
export function seedFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const seed = Number(raw);
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) throw new Error(`${name} must be an integer in [0, 2^32), got "${raw}"`);
  return seed;
}
