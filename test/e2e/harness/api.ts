/**
 * Small HTTP helpers for end-to-end tests: admin set-up, JSON calls, and an SSE reader. Every
 * response `call()` reads and every event `readSse` parses is checked against the server's
 * OpenAPI document (openapi-check.ts): a response the document does not describe fails the test.
 */
import { assertConforms, openApiCheck } from "./openapi-check.ts";

export const ADMIN_TOKEN = "fanout-local-admin-token";

export interface Tenant {
  tenantId: string;
  key: string;
  keyId: string;
}

export async function call(
  base: string,
  method: string,
  path: string,
  options: { token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let payload: string | undefined = options.rawBody;
  if (options.body !== undefined) payload = JSON.stringify(options.body);
  if (payload !== undefined) headers["content-type"] ??= "application/json";
  const res = await fetch(`${base}${path}`, { method, headers, body: payload });
  const text = await res.text();
  assertConforms((await openApiCheck(base)).response(method, res.url, res.status, res.headers.get("content-type"), text));
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, body, headers: res.headers };
}

export async function newTenant(base: string, name = "t"): Promise<Tenant> {
  const tenant = await call(base, "POST", "/v1/admin/tenants", { token: ADMIN_TOKEN, body: { name } });
  if (tenant.status !== 201) throw new Error(`tenant: ${tenant.status} ${JSON.stringify(tenant.body)}`);
  const key = await call(base, "POST", `/v1/admin/tenants/${tenant.body.id}/keys`, { token: ADMIN_TOKEN, body: { name: "k" } });
  if (key.status !== 201) throw new Error(`key: ${key.status}`);
  return { tenantId: tenant.body.id, key: key.body.key, keyId: key.body.id };
}

export interface SseEvent {
  id: number;
  event: string;
  data: any;
}

/** Reads an SSE response to its end (or until `stopAfter` events, or the first event `stopWhen` accepts), parsing each event. */
export async function readSse(
  res: Response,
  options: { stopAfter?: number; stopWhen?: (e: SseEvent) => boolean; onEvent?: (e: SseEvent) => void; comments?: string[] } = {},
): Promise<SseEvent[]> {
  if (!res.body) throw new Error("no body");
  const check = await openApiCheck(new URL(res.url).origin);
  // A stream is a job's events (GET …/events) or an operator's answer to `Accept: text/event-stream` (POST).
  assertConforms(check.response(res.url.split("?")[0].endsWith("/events") ? "GET" : "POST", res.url, res.status, res.headers.get("content-type"), ""));
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  const events: SseEvent[] = [];
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let split: number;
    while ((split = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, split);
      buffer = buffer.slice(split + 2);
      const fields = new Map<string, string>();
      for (const line of block.split("\n")) {
        if (line.startsWith(":")) options.comments?.push(line);
        const colon = line.indexOf(":");
        if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1).trimStart());
      }
      if (!fields.has("event")) continue;
      const event = { id: Number(fields.get("id")), event: fields.get("event") as string, data: JSON.parse(fields.get("data") ?? "null") };
      assertConforms(check.event(event));
      events.push(event);
      options.onEvent?.(event);
      if ((options.stopAfter !== undefined && events.length >= options.stopAfter) || options.stopWhen?.(event)) {
        await reader.cancel();
        return events;
      }
    }
  }
  return events;
}

export function openEvents(base: string, token: string, jobId: string, lastEventId?: number): Promise<Response> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (lastEventId !== undefined) headers["last-event-id"] = String(lastEventId);
  return fetch(`${base}/v1/jobs/${jobId}/events`, { headers });
}

/** Polls GET /v1/jobs/{id} until the job ends. */
export async function waitForJob(base: string, token: string, jobId: string, timeoutMs = 60_000): Promise<any> {
  return waitForStatus(base, token, jobId, ["completed", "cancelled", "failed"], timeoutMs);
}

/** Polls GET /v1/jobs/{id} until its status is one of `statuses`. */
export async function waitForStatus(base: string, token: string, jobId: string, statuses: string[], timeoutMs = 60_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await call(base, "GET", `/v1/jobs/${jobId}`, { token });
    if (statuses.includes(res.body?.status)) return res.body;
    if (Date.now() > deadline) throw new Error(`job ${jobId} did not end: ${JSON.stringify(res.body)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export async function allResults(base: string, token: string, jobId: string, query = ""): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | null = null;
  do {
    const q: string = `?limit=1000${query}${cursor ? `&cursor=${cursor}` : ""}`;
    const page = await call(base, "GET", `/v1/jobs/${jobId}/results${q}`, { token });
    if (page.status !== 200) throw new Error(`results: ${page.status}`);
    out.push(...page.body.results);
    cursor = page.body.next_cursor;
  } while (cursor);
  return out;
}

/** A prompt directive for the fake model server (see test/fake-model/script.ts). */
export function fake(tag: string, id: string | number, steps = "ok", ms?: number): string {
  return `<<fake tag=${tag} id=${id} steps=${steps}${ms !== undefined ? ` ms=${ms}` : ""}>>`;
}

export const ECHO_SCHEMA = {
  type: "object",
  properties: { echo: { type: "string" }, length: { type: "integer" } },
  required: ["echo", "length"],
};
