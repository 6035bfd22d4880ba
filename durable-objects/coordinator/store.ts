/**
 * The coordinator's own SQLite storage: the truth about a job while it runs.
 *
 *   meta(k, v)        spec, status, counters (JSON values)
 *   items(idx, …)     one row per input; state: pending → running → (waiting → pending)* → done
 *   events(id, …)     the SSE event log, ids 1, 2, 3… per job
 *   outbox(idx, …)    finished results not yet copied to D1
 */
export type ItemResult = { index: number; success: boolean } & Record<string, unknown>;

export type ItemState = "pending" | "running" | "waiting" | "done";

export type ItemRow = {
  idx: number;
  input: string;
  state: ItemState;
  attempts: number;
  ready_at: number;
  slot: number | null;
  token: string | null;
  dispatched_at: number | null;
  problems: string | null;
  input_tokens: number;
  output_tokens: number;
  session_id: string | null;
};

export type StoredEvent = {
  id: number;
  name: string;
  data: string;
};

export type OutboxRow = {
  idx: number;
  seq: number;
  success: number;
  data: string;
};

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS items (
  idx INTEGER PRIMARY KEY,
  input TEXT NOT NULL,
  state TEXT NOT NULL DEFAULT 'pending',
  attempts INTEGER NOT NULL DEFAULT 0,
  ready_at INTEGER NOT NULL DEFAULT 0,
  slot INTEGER,
  token TEXT,
  dispatched_at INTEGER,
  problems TEXT,
  input_tokens INTEGER NOT NULL DEFAULT 0,
  output_tokens INTEGER NOT NULL DEFAULT 0,
  session_id TEXT -- agentic jobs: the item's sub-session
);
CREATE INDEX IF NOT EXISTS items_by_state ON items (state, ready_at, idx);
CREATE TABLE IF NOT EXISTS events (id INTEGER PRIMARY KEY, name TEXT NOT NULL, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS outbox (idx INTEGER PRIMARY KEY, seq INTEGER NOT NULL, success INTEGER NOT NULL, data TEXT NOT NULL);
`;

export class CoordinatorStore {
  readonly #sql: SqlStorage;
  readonly #storage: DurableObjectStorage;

  constructor(storage: DurableObjectStorage) {
    this.#storage = storage;
    this.#sql = storage.sql;
    this.#sql.exec(SCHEMA);
  }

  transaction<T>(fn: () => T): T {
    return this.#storage.transactionSync(fn);
  }

  getMeta<T>(key: string): T | undefined {
    const row = this.#sql.exec<{ v: string }>("SELECT v FROM meta WHERE k = ?", key).toArray()[0];
    return row ? (JSON.parse(row.v) as T) : undefined;
  }

  setMeta(key: string, value: unknown): void {
    this.#sql.exec("INSERT OR REPLACE INTO meta (k, v) VALUES (?, ?)", key, JSON.stringify(value));
  }

  insertItems(inputs: unknown[], sessionId: (idx: number) => string | null): void {
    inputs.forEach((input, idx) =>
      this.#sql.exec("INSERT INTO items (idx, input, session_id) VALUES (?, ?, ?)", idx, JSON.stringify(input), sessionId(idx)),
    );
  }

  item(idx: number): ItemRow | undefined {
    return this.#sql.exec<ItemRow>("SELECT * FROM items WHERE idx = ?", idx).toArray()[0];
  }

  nextPending(limit: number): ItemRow[] {
    return this.#sql
      .exec<ItemRow>("SELECT * FROM items WHERE state = 'pending' ORDER BY idx LIMIT ?", limit)
      .toArray();
  }

  running(): ItemRow[] {
    return this.#sql.exec<ItemRow>("SELECT * FROM items WHERE state = 'running'").toArray();
  }

  /** Waiting items whose time has come become pending; returns how many. */
  releaseDue(now: number): number {
    return this.#sql.exec("UPDATE items SET state = 'pending' WHERE state = 'waiting' AND ready_at <= ?", now).rowsWritten;
  }

  nextWaitingAt(): number | null {
    const row = this.#sql.exec<{ t: number | null }>("SELECT MIN(ready_at) AS t FROM items WHERE state = 'waiting'").one();
    return row.t;
  }

  markRunning(idx: number, slot: number, token: string, now: number): void {
    this.#sql.exec(
      "UPDATE items SET state = 'running', slot = ?, token = ?, dispatched_at = ?, attempts = attempts + 1 WHERE idx = ?",
      slot, token, now, idx,
    );
  }

  /** A dispatch that never produced a report: back to pending. The lost attempt still counts. */
  markLost(idx: number): void {
    this.#sql.exec("UPDATE items SET state = 'pending', slot = NULL, token = NULL WHERE idx = ? AND state = 'running'", idx);
  }

  /** Attempts of the finished items: what their results add up to. */
  doneAttempts(): number {
    return this.#sql.exec<{ n: number | null }>("SELECT SUM(attempts) AS n FROM items WHERE state = 'done'").one().n ?? 0;
  }

  markRetry(idx: number, readyAt: number, problems: string[] | null, usage: { input_tokens: number; output_tokens: number }): void {
    this.#sql.exec(
      `UPDATE items SET state = ?, ready_at = ?, slot = NULL, token = NULL, problems = ?,
         input_tokens = input_tokens + ?, output_tokens = output_tokens + ? WHERE idx = ?`,
      readyAt > Date.now() ? "waiting" : "pending", readyAt, problems ? JSON.stringify(problems) : null,
      usage.input_tokens, usage.output_tokens, idx,
    );
  }

  markDone(idx: number, usage: { input_tokens: number; output_tokens: number }): ItemRow {
    return this.#sql
      .exec<ItemRow>(
        `UPDATE items SET state = 'done', slot = NULL, token = NULL,
           input_tokens = input_tokens + ?, output_tokens = output_tokens + ? WHERE idx = ? RETURNING *`,
        usage.input_tokens, usage.output_tokens, idx,
      )
      .one();
  }

  appendEvent(name: string, data: unknown): StoredEvent {
    return this.#sql
      .exec<StoredEvent>("INSERT INTO events (name, data) VALUES (?, ?) RETURNING id, name, data", name, JSON.stringify(data))
      .one();
  }

  eventsAfter(id: number): StoredEvent[] {
    return this.#sql.exec<StoredEvent>("SELECT id, name, data FROM events WHERE id > ? ORDER BY id", id).toArray();
  }

  addToOutbox(result: ItemResult, seq: number): void {
    this.#sql.exec(
      "INSERT OR IGNORE INTO outbox (idx, seq, success, data) VALUES (?, ?, ?, ?)",
      result.index, seq, result.success ? 1 : 0, JSON.stringify(result),
    );
  }

  outbox(limit: number): OutboxRow[] {
    return this.#sql.exec<OutboxRow>("SELECT * FROM outbox ORDER BY seq LIMIT ?", limit).toArray();
  }

  removeFromOutbox(indexes: number[]): void {
    for (const idx of indexes) this.#sql.exec("DELETE FROM outbox WHERE idx = ?", idx);
  }

  outboxSize(): number {
    return this.#sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM outbox").one().n;
  }
}
