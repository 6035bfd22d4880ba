/**
 * The coordinator's meta rows (`meta(k, v)`: spec, status, counters, budget, output, error — JSON
 * values), kept in memory as their stored text once read or written: the store is the only writer
 * of them, so a read after the first costs no statement. `forget()` after a transaction rolled back
 * (what it wrote is gone). A value rewritten often is written once at the end of its turn (`soon`).
 */
import { microtask } from "../../src/lib/microtask";
import type { JobMeta, MetaKey } from "./job-meta";

export class MetaTable {
  readonly #sql: SqlStorage;
  readonly #soon = new Map<MetaKey, unknown>(); // written at the end of this turn
  readonly #text = new Map<MetaKey, string | null>(); // as stored (null: no row)

  constructor(sql: SqlStorage) {
    this.#sql = sql;
  }

  /** A value, parsed anew from its text at each read (a caller may change what it gets). */
  get<K extends MetaKey>(key: K): JobMeta[K] | undefined {
    if (this.#soon.has(key)) return this.#soon.get(key) as JobMeta[K];
    let text = this.#text.get(key);
    if (text === undefined) {
      text = this.#sql.exec<{ v: string }>("SELECT v FROM meta WHERE k = ?", key).toArray()[0]?.v ?? null;
      this.#text.set(key, text);
    }
    return text === null ? undefined : (JSON.parse(text) as JobMeta[K]);
  }

  set<K extends MetaKey>(key: K, value: JobMeta[K]): void {
    this.#soon.delete(key);
    this.#write([[key, value]]);
  }

  /**
   * A value rewritten often (the counters, the spend): written once, at the end of this turn, with
   * whatever it holds by then. The write runs as a microtask, before the turn's writes are
   * committed together, so it is as durable as the writes around it, and a report that changes
   * the counters twice (its result, the next dispatch) writes them once.
   */
  soon<K extends MetaKey>(key: K, value: JobMeta[K]): void {
    if (this.#soon.size === 0) microtask(() => this.flush());
    this.#soon.set(key, value);
  }

  /** Writes what `soon` holds now, in one statement. */
  flush(): void {
    if (this.#soon.size > 0) this.#write([...this.#soon]);
    this.#soon.clear();
  }

  /** A transaction rolled back: what it wrote is gone, so every value is read again. */
  forget(): void {
    this.#text.clear();
  }

  /** Rows in one statement: at most JobMeta's 30 keys, 60 values bound (Durable Object SQLite binds 100). */
  #write(entries: [MetaKey, unknown][]): void {
    const texts = entries.map(([key, value]) => [key, JSON.stringify(value)] as const);
    for (const [key] of texts) this.#text.delete(key); // unknown until the write has landed
    this.#sql.exec(`INSERT OR REPLACE INTO meta (k, v) VALUES ${texts.map(() => "(?, ?)").join(", ")}`, ...texts.flat());
    for (const [key, text] of texts) this.#text.set(key, text);
  }
}
