// A shard's passes under way, counted by the key of the claimed object they serve through (a
// Provider, a namespace): a shard lets go of a claim only while none runs (ADR 33).

export class ShardWork {
  private readonly passes = new Map<string, number>();

  /** Runs `pass` counted against `claimed` (the claimed object's key). */
  async run<T>(claimed: string, pass: () => Promise<T>): Promise<T> {
    this.passes.set(claimed, (this.passes.get(claimed) ?? 0) + 1);
    try {
      return await pass();
    } finally {
      const left = (this.passes.get(claimed) ?? 1) - 1;
      if (left === 0) this.passes.delete(claimed);
      else this.passes.set(claimed, left);
    }
  }

  busy(claimed: string): boolean {
    return this.passes.has(claimed);
  }
}
