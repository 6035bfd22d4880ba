/**
 * Gates hold a job where a test wants it. A directive's `gate=K` lets the first K calls of its tag
 * through; the calls after them wait, in flight, until the tag's gate is opened
 * (`POST /_fake/gates?tag=T`), and every call after that goes through at once. A test that kills
 * the server mid-job holds the job's calls at a gate instead of racing their latency.
 */
export class Gates {
  readonly #passed = new Map<string, number>();
  readonly #opened = new Set<string>();
  readonly #waiting = new Map<string, Array<() => void>>();

  /** Resolves when a call of `tag` may go on: at once for the first `limit` calls and once the gate is open. */
  pass(tag: string, limit: number): Promise<void> {
    const passed = this.#passed.get(tag) ?? 0;
    if (this.#opened.has(tag) || passed < limit) {
      this.#passed.set(tag, passed + 1);
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const waiting = this.#waiting.get(tag) ?? [];
      waiting.push(resolve);
      this.#waiting.set(tag, waiting);
    });
  }

  /** How many calls of `tag` wait at its gate. */
  held(tag: string): number {
    return this.#waiting.get(tag)?.length ?? 0;
  }

  /** Whether the tag's gate was opened (a provider batch of gated lines ends only then). */
  isOpen(tag: string): boolean {
    return this.#opened.has(tag);
  }

  open(tag: string): void {
    this.#opened.add(tag);
    for (const resolve of this.#waiting.get(tag) ?? []) resolve();
    this.#waiting.delete(tag);
  }
}
