/**
 * The two append-only tables of the coordinator's storage (schema: ./schema.ts), beside the task
 * state of ./store.ts, on the same SQLite storage and so in the same transactions:
 *
 *   events(id, name, data)                   the SSE event log, ids 1, 2, 3… per job
 *   outbox(stage, idx, seq, success, data)   finished results not yet copied to D1 (./d1-mirror.ts)
 */
import type { OutboxRow } from "../../src/db/jobs";
import { exactLimit } from "./sql-limit";

export type StoredEvent = { id: number; name: string; data: string };

export class EventLogTable {
  constructor(private readonly sql: SqlStorage) {}

  /** `data` is the event's JSON text. */
  append(name: string, data: string): StoredEvent {
    const { id } = this.sql.exec<{ id: number }>("INSERT INTO events (name, data) VALUES (?, ?) RETURNING id", name, data).one();
    return { id, name, data };
  }

  after(id: number): StoredEvent[] {
    return this.sql.exec<StoredEvent>("SELECT id, name, data FROM events WHERE id > ? ORDER BY id", id).toArray();
  }
}

export class Outbox {
  constructor(private readonly sql: SqlStorage) {}

  /**
   * A result for D1. Its JSON text is stored once: in its event (`eventId`, whose data ends with
   * `,"result":<the result>}`), which `next` reads it back from; the row's own data is left empty.
   */
  add(stage: string, result: { index: number; success: boolean }, seq: number, eventId: number): void {
    this.sql.exec(
      "INSERT OR REPLACE INTO outbox (stage, idx, seq, success, data, event_id) VALUES (?, ?, ?, ?, '', ?)",
      stage,
      result.index,
      seq,
      result.success ? 1 : 0,
      eventId,
    );
  }

  /**
   * The oldest rows first, each with its result's JSON text: its event's last field cut out as it
   * was written (the first `,"result":` of an event's data is its key: the fields before it are
   * the job's id, counts and names, and a quote inside a string is escaped); a row from before
   * schema step 12 has its own data.
   */
  next(limit: number): OutboxRow[] {
    return this.sql
      .exec<OutboxRow>(
        `SELECT o.stage, o.idx, o.seq, o.success,
           CASE WHEN o.event_id IS NULL THEN o.data
             ELSE substr(e.data, instr(e.data, ',"result":') + 10, length(e.data) - instr(e.data, ',"result":') - 10) END AS data
         FROM outbox o LEFT JOIN events e ON e.id = o.event_id ORDER BY o.seq ${exactLimit(limit)}`, // the mirror's batch: one constant
      )
      .toArray();
  }

  /** The rows D1 now has. One statement: `seq` grows with every result, so a row written again since it was read has left the range. */
  remove(rows: OutboxRow[]): void {
    if (rows.length === 0) return;
    const seqs = rows.map((r) => r.seq);
    this.sql.exec("DELETE FROM outbox WHERE seq BETWEEN ? AND ?", Math.min(...seqs), Math.max(...seqs));
  }

  size(): number {
    return this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM outbox").one().n;
  }

  /** A stage planned anew: its results' rows go with its tasks. */
  dropStage(stage: string): void {
    this.sql.exec("DELETE FROM outbox WHERE stage = ?", stage);
  }
}
