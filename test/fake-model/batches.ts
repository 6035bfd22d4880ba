/**
 * The providers' batch APIs, as their SDKs call them, over the fake's own answers (each line is
 * answered like a request of the live API, its directive's steps included, without the live rate
 * limits, gates or latency):
 * - OpenAI Batch: `POST /v1/files` (multipart, purpose `batch`, a JSONL of
 *   `{custom_id, method, url, body}`), `POST /v1/batches`, `GET /v1/batches[/{id}]`,
 *   `POST /v1/batches/{id}/cancel`, `GET /v1/files/{id}/content`. A batch is `validating`, then
 *   `in_progress` (its `request_counts` growing), and ends `delayMs` after it was created:
 *   `completed`, or `expired` when a line's step is `expire` (its finished lines in the output
 *   file, the expired ones in the error file with `batch_expired`); cancelled, `cancelling` then
 *   `cancelled` with no output for the lines it never ran. Lines that failed (HTTP ≥ 400) are in
 *   the error file with their `response.status_code`.
 * - Anthropic Message Batches: `POST /v1/messages/batches` (`{requests: [{custom_id, params}]}`),
 *   `GET /v1/messages/batches/{id}`, `GET …/{id}/results` (JSONL: `succeeded`, `errored`,
 *   `expired`, `canceled`), `POST …/{id}/cancel`; `processing_status` `in_progress`, `canceling`,
 *   then `ended` with its `results_url`.
 * Each line is done the fake's batch delay after the batch's creation, or its directive's
 * `batch_ms=` after it; the batch ends when all are (one with a gated line, `gate=`, once the tag's
 * gate opens). A line with `batch_refuse=1` makes the batch's creation a 400; one with
 * `batch_fail=1` makes an OpenAI batch end `failed` (its validation errors, no output). A line with
 * `create_gate=1` makes the batch's creation answer only once its tag's gate opens — the batch
 * exists (and is billed) from the request on, as when an answer is slow to come back. A line with
 * `batch_omit=1` is left out of its ended batch's results (a provider that loses a line); one with
 * `batch_lie=1` makes the creation answer with the id of another batch (a decoy, with no
 * metadata and no lines), as a server that names someone else's batch would.
 * As on the real APIs, a batch and its files are the key's that created them: another key is
 * answered 404 (OpenAI's batches are a project's, Anthropic's a workspace's). Cancelled, it is `cancelling` for its lines' `cancel_ms=` (0 by default), then ends:
 * the lines done by the cancel are answered (OpenAI keeps them in the output file; Anthropic
 * reports them succeeded), and so are those with `on_cancel=ok` (under way when the cancel came:
 * billed); the others come back cancelled.
 * Counters: GET /_fake/batches lists every batch (its provider, status and lines) for the tests.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Answered } from "./server.ts";

type Json = Record<string, unknown>;
type Format = "openai" | "anthropic";
type Answer = (format: Format, body: Json, key: string, auth: string) => Promise<Answered>;

interface Line {
  custom_id: string;
  body: Json;
}

interface FakeBatch {
  id: string;
  format: Format;
  key: string;
  auth: string;
  createdAt: number;
  lines: Line[];
  answers: Promise<Answered[]> | null; // computed once, when the batch ends (the steps are consumed then)
  settled: Answered[] | null;
  cancelledAt: number | null;
  metadata: Json | null;
  inputFileId: string | null;
  outputFileId: string | null;
  errorFileId: string | null;
}

const secs = (ms: number) => Math.floor(ms / 1000);

/** A batch the provider refuses at its creation (a line's directive says `batch_refuse=1`): 400. */
class Refused extends Error {}

function refuseIfAsked(bodies: Json[]): void {
  if (bodies.some((b) => JSON.stringify(b).includes("batch_refuse=1"))) throw new Refused("fake: the batch is refused (batch_refuse=1)");
}
let counter = 0;
const nextId = (prefix: string) => `${prefix}${Date.now().toString(36)}${(++counter).toString(36)}`;

export class FakeBatches {
  readonly #batches = new Map<string, FakeBatch>();
  readonly #files = new Map<string, { text: string; filename: string; purpose: string; createdAt: number; key?: string }>();
  readonly #answer: Answer;
  readonly #delayMs: () => number;
  readonly #gateOpen: (tag: string) => boolean;

  constructor(answer: Answer, delayMs: () => number, gateOpen: (tag: string) => boolean = () => true) {
    this.#answer = answer;
    this.#delayMs = delayMs;
    this.#gateOpen = gateOpen;
  }

  /** A batch with a gated line (`gate=` in its directive) runs until the tag's gate is opened (a test that kills the server mid-batch). */
  #gated(batch: FakeBatch): boolean {
    return batch.lines.some((l) => {
      const directive = /<<fake[^>]*>>/.exec(JSON.stringify(l.body))?.[0] ?? "";
      const tag = /\btag=(\S+?)[\s>]/.exec(directive)?.[1];
      return /\bgate=\d+/.test(directive) && tag !== undefined && !this.#gateOpen(tag);
    });
  }

  /** Answers the request when it is one of the batch APIs' (true), else leaves it (false). */
  handle(req: IncomingMessage, res: ServerResponse, url: URL, raw: () => Promise<Buffer>, key: string, auth: string): boolean {
    const path = url.pathname;
    const send = (status: number, body: unknown): void => void res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    const run = (work: () => Promise<void>) => {
      work().catch((err: unknown) =>
        err instanceof Refused
          ? send(400, { type: "error", error: { type: "invalid_request_error", message: err.message, param: null, code: null } })
          : send(500, { error: { type: "api_error", message: String(err) } }),
      );
      return true;
    };
    const anthropic = /^\/v1\/messages\/batches(?:\/([^/]+))?(?:\/(results|cancel))?$/.exec(path);
    if (anthropic) {
      const [, id, action] = anthropic;
      if (req.method === "POST" && !id)
        return run(async () => send(200, await this.#createAnthropic(JSON.parse((await raw()).toString("utf8")) as Json, key, auth)));
      const batch = id ? this.#batches.get(id) : undefined;
      if (!batch || batch.format !== "anthropic" || batch.key !== key)
        return (send(404, { type: "error", error: { type: "not_found_error", message: "no such batch" } }), true);
      if (req.method === "POST" && action === "cancel") batch.cancelledAt ??= Date.now();
      return run(async () => {
        await this.#progress(batch);
        if (action === "results") {
          if (!batch.settled) return void send(400, { type: "error", error: { type: "invalid_request_error", message: "the batch has not ended" } });
          res.writeHead(200, { "content-type": "application/binary" }).end(this.#anthropicResults(batch));
          return;
        }
        send(200, this.#anthropicView(batch, `http://${req.headers.host ?? "127.0.0.1"}`));
      });
    }
    if (path === "/v1/files" && req.method === "POST") return run(async () => send(200, await this.#upload(req, await raw(), key)));
    const content = /^\/v1\/files\/([^/]+)\/content$/.exec(path);
    if (content && req.method === "GET") {
      const file = this.#files.get(content[1] ?? "");
      if (!file || (file.key !== undefined && file.key !== key))
        return (send(404, { error: { message: "No such File object", type: "invalid_request_error" } }), true);
      res.writeHead(200, { "content-type": "application/octet-stream" }).end(file.text);
      return true;
    }
    if (path === "/v1/batches" && req.method === "POST")
      return run(async () => send(200, await this.#createOpenAi(JSON.parse((await raw()).toString("utf8")) as Json, key, auth)));
    if (path === "/v1/batches" && req.method === "GET") {
      // Newest first, a page of `limit` (default 20, at most 100) after the id `after`, as OpenAI pages its list.
      const all = [...this.#batches.values()].filter((b) => b.format === "openai" && b.key === key).reverse();
      const after = url.searchParams.get("after");
      const from = after ? all.findIndex((b) => b.id === after) + 1 : 0;
      const limit = Math.min(100, Math.max(1, Number(url.searchParams.get("limit") ?? 20) || 20));
      const data = all.slice(from, from + limit);
      return run(async () => {
        const views = [];
        for (const b of data) views.push(await this.#openAiView(b));
        send(200, { object: "list", data: views, first_id: views[0]?.id ?? null, last_id: views.at(-1)?.id ?? null, has_more: from + limit < all.length });
      });
    }
    const openai = /^\/v1\/batches\/([^/]+)(?:\/(cancel))?$/.exec(path);
    if (openai) {
      const batch = this.#batches.get(openai[1] ?? "");
      if (!batch || batch.format !== "openai" || batch.key !== key)
        return (send(404, { error: { message: "No batch found", type: "invalid_request_error" } }), true);
      if (req.method === "POST" && openai[2] === "cancel") batch.cancelledAt ??= Date.now();
      return run(async () => send(200, await this.#openAiView(batch)));
    }
    if (path === "/_fake/batches") {
      send(
        200,
        [...this.#batches.values()].map((b) => ({
          id: b.id,
          provider: b.format,
          requests: b.lines.length,
          custom_ids: b.lines.map((l) => l.custom_id),
          tags: b.lines.map((l) => this.#field(l, "tag")),
          cancelled: b.cancelledAt !== null,
          ended: b.settled !== null,
        })),
      );
      return true;
    }
    return false;
  }

  async #upload(req: IncomingMessage, body: Buffer, key: string) {
    const form = await new Request("http://fake/v1/files", {
      method: "POST",
      headers: req.headers as Record<string, string>,
      body: new Uint8Array(body),
    }).formData();
    const file = form.get("file");
    if (!(file instanceof Blob)) throw new Error("no file in the upload");
    const id = nextId("file-");
    const filename = file instanceof File ? file.name : "upload.jsonl";
    this.#files.set(id, { text: await file.text(), filename, purpose: String(form.get("purpose")), createdAt: Date.now(), key });
    return {
      id,
      object: "file",
      bytes: file.size,
      created_at: secs(Date.now()),
      filename,
      purpose: String(form.get("purpose")),
      status: "processed",
      expires_at: null,
      status_details: null,
    };
  }

  async #createOpenAi(body: Json, key: string, auth: string) {
    const file = this.#files.get(String(body.input_file_id));
    if (!file || file.purpose !== "batch") throw new Error("input_file_id is not a batch file");
    const lines = file.text
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => JSON.parse(l) as { custom_id: string; body: Json });
    refuseIfAsked(lines.map((l) => l.body));
    const batch = this.#add(
      "openai",
      key,
      auth,
      lines.map((l) => ({ custom_id: l.custom_id, body: l.body })),
      (body.metadata as Json | null) ?? null,
    );
    batch.inputFileId = String(body.input_file_id);
    await this.#heldCreation(batch);
    return this.#openAiView(this.#decoyFor(batch) ?? batch);
  }

  async #createAnthropic(body: Json, key: string, auth: string) {
    const requests = Array.isArray(body.requests) ? (body.requests as { custom_id: string; params: Json }[]) : [];
    refuseIfAsked(requests.map((r) => r.params));
    const batch = this.#add(
      "anthropic",
      key,
      auth,
      requests.map((r) => ({ custom_id: r.custom_id, body: r.params })),
      null,
    );
    await this.#heldCreation(batch);
    return this.#anthropicView(this.#decoyFor(batch) ?? batch, "");
  }

  /** A batch with a `batch_lie=1` line is answered with another batch of the key: a decoy with no lines and no metadata. */
  #decoyFor(batch: FakeBatch): FakeBatch | null {
    if (!batch.lines.some((l) => this.#field(l, "batch_lie") === "1")) return null;
    return this.#add(batch.format, batch.key, batch.auth, [], null);
  }

  /** A batch with a `create_gate=1` line is answered once that line's tag's gate opens (it exists meanwhile). */
  async #heldCreation(batch: FakeBatch): Promise<void> {
    const held = batch.lines.find((l) => this.#field(l, "create_gate") === "1");
    const tag = held ? this.#field(held, "tag") : null;
    while (tag !== null && !this.#gateOpen(tag)) await new Promise((r) => setTimeout(r, 20));
  }

  #add(format: Format, key: string, auth: string, lines: Line[], metadata: Json | null): FakeBatch {
    const batch: FakeBatch = {
      id: nextId(format === "openai" ? "batch_" : "msgbatch_"),
      format,
      key,
      auth,
      createdAt: Date.now(),
      lines,
      answers: null,
      settled: null,
      cancelledAt: null,
      metadata,
      inputFileId: null,
      outputFileId: null,
      errorFileId: null,
    };
    this.#batches.set(batch.id, batch);
    return batch;
  }

  /** A line's directive field (`batch_ms`, `cancel_ms`, `on_cancel`), or null. */
  #field(line: Line, name: string): string | null {
    const directive = /<<fake[^>]*>>/.exec(JSON.stringify(line.body))?.[0] ?? "";
    return new RegExp(`\\b${name}=(\\S+?)[\\s>]`).exec(directive)?.[1] ?? null;
  }

  /** When a line is done: the fake's batch delay after the batch's creation, or its own `batch_ms`. */
  #lineDoneAt(batch: FakeBatch, line: Line): number {
    return batch.createdAt + Math.max(this.#delayMs(), Number(this.#field(line, "batch_ms") ?? 0));
  }

  /**
   * Ends the batch once every line is done (a gated one once its gate opens); cancelled, once its
   * lines' `cancel_ms` (the provider's `cancelling`, 0 by default) has passed: the lines done by the
   * cancel (or with `on_cancel=ok`: under way, billed) answered, the others cancelled.
   */
  async #progress(batch: FakeBatch): Promise<void> {
    if (batch.settled) return;
    const now = Date.now();
    if (batch.cancelledAt !== null) {
      const cancelMs = Math.max(0, ...batch.lines.map((l) => Number(this.#field(l, "cancel_ms") ?? 0)));
      if (now < batch.cancelledAt + cancelMs) return;
      const at = batch.cancelledAt;
      const cancelled = { status: 0, headers: {}, cancelled: true } as Answered & { cancelled: boolean };
      batch.settled = await Promise.all(
        batch.lines.map((l) =>
          this.#lineDoneAt(batch, l) <= at || this.#field(l, "on_cancel") === "ok"
            ? this.#answer(batch.format, l.body, batch.key, batch.auth)
            : Promise.resolve(cancelled),
        ),
      );
    } else if (batch.lines.every((l) => this.#lineDoneAt(batch, l) <= now) && !this.#gated(batch)) {
      // A batch that fails its validation runs none of its lines.
      const none = { status: 0, headers: {}, cancelled: true } as Answered & { cancelled: boolean };
      if (batch.lines.some((l) => this.#field(l, "batch_fail") === "1")) batch.answers ??= Promise.resolve(batch.lines.map(() => none));
      batch.answers ??= Promise.all(batch.lines.map((l) => this.#answer(batch.format, l.body, batch.key, batch.auth)));
      batch.settled = await batch.answers;
    } else return;
    if (batch.format === "openai") this.#openAiFiles(batch);
  }

  #openAiFiles(batch: FakeBatch): void {
    const ok: string[] = [];
    const bad: string[] = [];
    batch.lines.forEach((line, i) => {
      const a = batch.settled?.[i] as (Answered & { cancelled?: boolean }) | undefined;
      if (!a || a.cancelled || this.#field(line, "batch_omit") === "1") return;
      const id = nextId("batch_req_");
      if (a.expired)
        bad.push(
          JSON.stringify({
            id,
            custom_id: line.custom_id,
            response: null,
            error: { code: "batch_expired", message: "This request could not be executed before the completion window expired." },
          }),
        );
      else
        (a.status === 200 ? ok : bad).push(
          JSON.stringify({ id, custom_id: line.custom_id, response: { status_code: a.status, request_id: nextId("req_"), body: a.json }, error: null }),
        );
    });
    const file = (lines: string[]) => {
      if (lines.length === 0) return null;
      const id = nextId("file-");
      this.#files.set(id, { text: lines.join("\n") + "\n", filename: `${batch.id}.jsonl`, purpose: "batch_output", createdAt: Date.now(), key: batch.key });
      return id;
    };
    batch.outputFileId = file(ok);
    batch.errorFileId = file(bad);
  }

  /** How long the batch takes: its slowest line's time. */
  #delayOf(batch: FakeBatch): number {
    return Math.max(...batch.lines.map((l) => this.#lineDoneAt(batch, l) - batch.createdAt));
  }

  async #openAiView(batch: FakeBatch) {
    await this.#progress(batch);
    const total = batch.lines.length;
    const settled = (batch.settled ?? []) as (Answered & { cancelled?: boolean })[];
    const expired = settled.some((a) => a.expired);
    const failedWhole = batch.settled !== null && batch.lines.some((l) => this.#field(l, "batch_fail") === "1");
    const status = batch.settled
      ? batch.cancelledAt !== null
        ? "cancelled"
        : failedWhole
          ? "failed"
          : expired
            ? "expired"
            : "completed"
      : batch.cancelledAt !== null
        ? "cancelling"
        : Date.now() - batch.createdAt < this.#delayOf(batch) / 4
          ? "validating"
          : "in_progress";
    const done = batch.settled
      ? settled.filter((a) => a.status === 200).length
      : Math.min(total - 1, Math.floor((total * (Date.now() - batch.createdAt)) / Math.max(1, this.#delayOf(batch))));
    const failed = settled.filter((a) => !a.cancelled && a.status !== 200).length;
    const at = secs(batch.createdAt);
    return {
      id: batch.id,
      object: "batch",
      endpoint: "/v1/chat/completions",
      errors: failedWhole
        ? { object: "list", data: [{ code: "invalid_request", message: "fake: the batch failed its validation", param: null, line: 1 }] }
        : null,
      input_file_id: batch.inputFileId,
      completion_window: "24h",
      status,
      output_file_id: batch.outputFileId,
      error_file_id: batch.errorFileId,
      created_at: at,
      in_progress_at: at,
      expires_at: at + 86_400,
      finalizing_at: batch.settled ? secs(Date.now()) : null,
      completed_at: status === "completed" ? secs(Date.now()) : null,
      failed_at: null,
      expired_at: status === "expired" ? secs(Date.now()) : null,
      cancelling_at: batch.cancelledAt ? secs(batch.cancelledAt) : null,
      cancelled_at: status === "cancelled" ? secs(Date.now()) : null,
      request_counts: { total, completed: Math.max(0, done), failed },
      metadata: batch.metadata,
    };
  }

  #anthropicView(batch: FakeBatch, origin: string) {
    const settled = (batch.settled ?? []) as (Answered & { cancelled?: boolean })[];
    const count = (f: (a: Answered & { cancelled?: boolean }) => boolean) => settled.filter(f).length;
    const ended = batch.settled !== null;
    return {
      id: batch.id,
      type: "message_batch",
      processing_status: ended ? "ended" : batch.cancelledAt !== null ? "canceling" : "in_progress",
      request_counts: {
        processing: ended ? 0 : batch.lines.length,
        succeeded: count((a) => a.status === 200),
        errored: count((a) => !a.cancelled && !a.expired && a.status !== 200),
        canceled: count((a) => a.cancelled === true),
        expired: count((a) => a.expired === true),
      },
      ended_at: ended ? new Date().toISOString() : null,
      created_at: new Date(batch.createdAt).toISOString(),
      expires_at: new Date(batch.createdAt + 86_400_000).toISOString(),
      archived_at: null,
      cancel_initiated_at: batch.cancelledAt ? new Date(batch.cancelledAt).toISOString() : null,
      results_url: ended ? `${origin}/v1/messages/batches/${batch.id}/results` : null,
    };
  }

  #anthropicResults(batch: FakeBatch): string {
    const lines = batch.lines
      .filter((line) => this.#field(line, "batch_omit") !== "1")
      .map((line) => {
        const i = batch.lines.indexOf(line);
        const a = batch.settled?.[i] as Answered & { cancelled?: boolean };
        const result = a.cancelled
          ? { type: "canceled" }
          : a.expired
            ? { type: "expired" }
            : a.status === 200
              ? { type: "succeeded", message: a.json }
              : {
                  type: "errored",
                  error: { type: "error", error: (a.json as { error?: unknown } | undefined)?.error ?? { type: "api_error", message: "failed" } },
                };
        return JSON.stringify({ custom_id: line.custom_id, result });
      });
    return lines.map((l) => `${l}\n`).join(""); // JSONL: a line each, nothing when none
  }
}
