/**
 * Runs work that arrives in separate events together, in one later turn of the event loop, the
 * items started in arrival order. A Durable Object commits the writes of one turn as one
 * transaction, and its output gate holds every answer until that commit, so a burst of worker
 * reports handled together costs one storage commit instead of one each (locally, one disk sync;
 * on Cloudflare, one replicated write). An item that throws rejects only its own caller.
 *
 * What it costs: each item waits for the turn (a zero-delay timer) even when it comes alone.
 * What it keeps: an answer still leaves only once its writes are durable, so a crash loses the
 * whole turn's answers with its writes, and each worker reports again, as after a single report.
 */
type Item<T> = { run: () => Promise<T>; resolve: (value: T) => void; reject: (err: unknown) => void };

export class TurnBatch<T> {
  #queued: Item<T>[] = [];
  #turns = 0;

  /** `run` is called in the next turn, after those queued before it, and its result is the answer. */
  add(run: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queued.push({ run, resolve, reject });
      if (this.#queued.length === 1) setTimeout(() => this.#drain(), 0);
    });
  }

  /** How many turns have run (for tests: items that arrived together ran in one). */
  get turns(): number {
    return this.#turns;
  }

  /**
   * Starts every queued item in arrival order. What each does before its first wait runs in this
   * turn (a report's work: recording it, dispatching the next task); an item that waits on I/O (the
   * provider limiter) lets the others go on meanwhile, as separate events would.
   */
  #drain(): void {
    this.#turns++;
    for (const item of this.#queued.splice(0)) {
      let answer: Promise<T>;
      try {
        answer = item.run();
      } catch (err) {
        answer = Promise.reject(err);
      }
      answer.then(item.resolve, item.reject);
    }
  }
}
