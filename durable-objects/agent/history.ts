/**
 * A sub-session's conversation, in its object's SQLite table `messages(seq, message, mirrored)`,
 * and its copy in D1 (the session row and the messages not mirrored yet). The model sees message 0,
 * the summary of compacted turns if any, then the turns from `tailFrom` on.
 */
import { summaryNote } from "../../src/agent/compaction";
import { chainOf, type SessionSpec, type SessionState } from "../../src/agent/session-state";
import { writeSession } from "../../src/db/sessions";
import type { TaskRef } from "../../src/engine/types";
import type { ChatMessage } from "../../src/llm/types";

const SCHEMA = "CREATE TABLE IF NOT EXISTS messages (seq INTEGER PRIMARY KEY, message TEXT NOT NULL, mirrored INTEGER NOT NULL DEFAULT 0)";

export class SessionHistory {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(SCHEMA);
  }

  append(message: ChatMessage): void {
    this.sql.exec("INSERT INTO messages (message) VALUES (?)", JSON.stringify(message));
  }

  all(): ChatMessage[] {
    return this.sql
      .exec<{ message: string }>("SELECT message FROM messages ORDER BY seq")
      .toArray()
      .map((r) => JSON.parse(r.message) as ChatMessage);
  }

  /** Copies the session row and any new messages to D1; a failure is retried at the next turn, but not at the end (it must land before the report). */
  async mirror(db: D1Database, spec: SessionSpec, task: TaskRef, state: SessionState): Promise<void> {
    const pending = this.sql.exec<{ seq: number; message: string }>("SELECT seq, message FROM messages WHERE mirrored = 0 ORDER BY seq").toArray();
    try {
      await writeSession(
        db,
        {
          id: state.sessionId,
          jobId: spec.jobId,
          tenantId: spec.tenantId,
          index: task.index,
          status: state.done ? (state.done.success ? "completed" : "failed") : "running",
          stopReason: state.done?.stop_reason ?? null,
          turns: state.turns,
          inputTokens: state.inputTokens,
          outputTokens: state.outputTokens,
          compactions: state.compactions,
          parentId: chainOf(state).parentSessionId,
          depth: chainOf(state).depth,
        },
        pending.map((p) => ({ seq: p.seq, message: JSON.parse(p.message) as ChatMessage })),
      );
      for (const p of pending) this.sql.exec("UPDATE messages SET mirrored = 1 WHERE seq = ?", p.seq);
    } catch (err) {
      if (state.done) throw err;
      console.error("mirroring the session to D1 failed; retrying at the next turn", err);
    }
  }
}

/** What the model is sent: message 0, the summary note, and the turns after the last compaction. */
export function contextOf(state: SessionState, history: ChatMessage[]): ChatMessage[] {
  const first = history.slice(0, 1);
  const note: ChatMessage[] = state.summary ? [{ role: "user", content: summaryNote(state.summary) }] : [];
  return [...first, ...note, ...history.slice(state.tailFrom)];
}
