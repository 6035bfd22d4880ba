/** Helpers for tests that run inside workerd against the real Worker and its real D1 binding. */
import { env } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { vi } from "vitest";

export const ADMIN = "fanout-local-admin-token";

export async function request(
  method: string,
  path: string,
  options: { token?: string; body?: unknown; raw?: string; bytes?: Uint8Array; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const payload = options.bytes ?? options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  if (payload !== undefined) headers["content-type"] ??= "application/json";
  const res = await exports.default.fetch(new Request(`http://fanout.test${path}`, { method, headers, body: payload }));
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    // keep text
  }
  return { status: res.status, body, headers: res.headers };
}

export async function tenantWithKey(name = "acme"): Promise<{ tenantId: string; key: string; keyId: string }> {
  const tenant = await request("POST", "/v1/admin/tenants", { token: ADMIN, body: { name } });
  const key = await request("POST", `/v1/admin/tenants/${tenant.body.id}/keys`, { token: ADMIN, body: { name: "ci" } });
  return { tenantId: tenant.body.id, key: key.body.key, keyId: key.body.id };
}

export async function countRows(table: string): Promise<number> {
  const row = await env.DB.prepare(`SELECT COUNT(*) AS n FROM ${table}`).first<{ n: number }>();
  return row?.n ?? 0;
}

/** A finished job row written straight to D1, for tests of read routes and tenant scoping. */
export async function insertFinishedJob(tenantId: string, jobId: string, status = "completed"): Promise<void> {
  const now = new Date();
  await env.DB.batch([
    env.DB.prepare(
      `INSERT INTO jobs (id, tenant_id, type, status, model, total, completed, succeeded, request_hash, created_ms, created_at, completed_at)
       VALUES (?, ?, 'map', ?, 'openai/x', 1, 1, 1, 'h', ?, ?, ?)`,
    ).bind(jobId, tenantId, status, now.getTime(), now.toISOString(), now.toISOString()),
    env.DB.prepare("INSERT INTO results (job_id, idx, completion_seq, success, data) VALUES (?, 0, 1, 1, ?)").bind(
      jobId,
      JSON.stringify({
        index: 0,
        input: "a",
        output: "b",
        success: true,
        error: null,
        error_kind: null,
        attempts: 1,
        usage: { input_tokens: 1, output_tokens: 1 },
      }),
    ),
  ]);
}

/**
 * Runs `fn` with console.error and console.log captured: a test of a failure path checks what it
 * logs instead of printing it (a passing run prints no alarming line).
 */
export async function capturingLogs<T>(fn: () => Promise<T>): Promise<{ value: T; logged: string[] }> {
  const logged: string[] = [];
  const keep = (...args: unknown[]) => void logged.push(args.map((a) => (a instanceof Error ? `${a.name}: ${a.message}` : String(a))).join(" "));
  const error = vi.spyOn(console, "error").mockImplementation(keep);
  const log = vi.spyOn(console, "log").mockImplementation(keep);
  try {
    return { value: await fn(), logged };
  } finally {
    error.mockRestore();
    log.mockRestore();
  }
}
