/** Agentic sessions and their messages in D1 (mirrored from each session's Durable Object). */
import type { ChatMessage } from "../llm/types";

export interface SessionRow {
  id: string;
  job_id: string;
  tenant_id: string;
  idx: number;
  status: string;
  stop_reason: string | null;
  turns: number;
  input_tokens: number;
  output_tokens: number;
  compactions: number;
  parent_id: string | null;
  depth: number;
  created_at: string;
  updated_at: string;
}

export interface SessionProgress {
  id: string;
  jobId: string;
  tenantId: string;
  index: number;
  status: "running" | "completed" | "failed";
  stopReason: string | null;
  turns: number;
  inputTokens: number;
  outputTokens: number;
  compactions: number;
  parentId: string | null; // a subtask's parent session
  depth: number;
}

/** Upserts the session row and appends new messages (seq numbers make this idempotent). */
export async function writeSession(db: D1Database, s: SessionProgress, messages: { seq: number; message: ChatMessage }[]): Promise<void> {
  const now = new Date().toISOString();
  const statements = [
    db
      .prepare(
        `INSERT INTO sessions (id, job_id, tenant_id, idx, status, stop_reason, turns, input_tokens, output_tokens, compactions, parent_id, depth, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET status = excluded.status, stop_reason = excluded.stop_reason, turns = excluded.turns,
           input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens, compactions = excluded.compactions,
           updated_at = excluded.updated_at`,
      )
      .bind(s.id, s.jobId, s.tenantId, s.index, s.status, s.stopReason, s.turns, s.inputTokens, s.outputTokens, s.compactions, s.parentId, s.depth, now, now),
    ...messages.map((m) =>
      db
        .prepare("INSERT OR IGNORE INTO session_messages (session_id, seq, message, created_at) VALUES (?, ?, ?, ?)")
        .bind(s.id, m.seq, JSON.stringify(m.message), now),
    ),
  ];
  await db.batch(statements);
}

/** A session of this tenant, or null: another tenant's session is indistinguishable from none. */
export async function getSession(db: D1Database, tenantId: string, sessionId: string): Promise<SessionRow | null> {
  return db.prepare("SELECT * FROM sessions WHERE id = ? AND tenant_id = ?").bind(sessionId, tenantId).first<SessionRow>();
}

export async function sessionMessages(db: D1Database, sessionId: string): Promise<ChatMessage[]> {
  const { results } = await db.prepare("SELECT message FROM session_messages WHERE session_id = ? ORDER BY seq").bind(sessionId).all<{ message: string }>();
  return results.map((r) => JSON.parse(r.message) as ChatMessage);
}

/** The items' sessions of a job (not their subtasks'), by item index. */
export async function listJobSessions(db: D1Database, jobId: string): Promise<SessionRow[]> {
  const { results } = await db.prepare("SELECT * FROM sessions WHERE job_id = ? AND parent_id IS NULL ORDER BY idx").bind(jobId).all<SessionRow>();
  return results;
}

/** A session's subtasks, in the order they were started. */
export async function childSessions(db: D1Database, sessionId: string): Promise<string[]> {
  const { results } = await db.prepare("SELECT id FROM sessions WHERE parent_id = ? ORDER BY created_at, id").bind(sessionId).all<{ id: string }>();
  return results.map((r) => r.id);
}
