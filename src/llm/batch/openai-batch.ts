/**
 * OpenAI's Batch API through the official SDK (retries off): the lines are a JSONL file uploaded
 * with purpose `batch`, the batch runs `/v1/chat/completions` (or `/v1/embeddings`, an embedding
 * stage's) within the `24h` window and carries
 * `metadata.fanout_batch` (the coordinator's id, so a restart finds it). Results: the output file
 * (status 200 lines) and the error file (failed requests; `batch_expired` for lines the window
 * closed on), read as they stream in, never whole (./types.ts bounds what is kept). Caps: 50,000
 * requests or 200 MB a batch.
 */
import { toFile } from "openai";
import { chatParams, clientFor, readCompletion } from "../openai";
import { embeddingParams, readEmbedding } from "../embeddings";
import { ProviderFailure } from "../errors";
import type { ModelRequest, ProviderEndpoint } from "../types";
import { isPermanentStatus, MAX_RESULT_CHARS, MAX_RESULT_LINE_CHARS, type BatchApi, type BatchState, type LineResult, type ResultRead } from "./types";
import { streamLines, type ReadBudget } from "./stream-lines";

/** How far back a restart's lookup pages through the key's batches (newest first): to its batch's creation, and at most this many. */
const MAX_FOUND_BATCHES = 5_000;

const ENDED = new Set(["completed", "expired", "cancelled"]);
const CHAT = "/v1/chat/completions";
const EMBEDDINGS = "/v1/embeddings"; // an embedding stage's lines (../embeddings.ts)

type OutputLine = {
  custom_id?: unknown;
  response?: { status_code?: unknown; body?: unknown } | null;
  error?: { code?: unknown; message?: unknown } | null;
};

function lineResult(text: string): LineResult | null {
  let line: OutputLine;
  try {
    line = JSON.parse(text) as OutputLine;
  } catch {
    return null;
  }
  const customId = typeof line.custom_id === "string" ? line.custom_id : null;
  if (!customId) return null;
  if (line.error?.code === "batch_expired") return { customId, kind: "expired" };
  const status = typeof line.response?.status_code === "number" ? line.response.status_code : null;
  if (status === 200) {
    try {
      const body = line.response?.body as { object?: unknown } | undefined;
      return { customId, kind: "answer", response: body?.object === "list" ? readEmbedding(body) : readCompletion(body) };
    } catch (err) {
      return {
        customId,
        kind: "error",
        message: err instanceof Error ? err.message : String(err),
        permanent: err instanceof ProviderFailure && err.failureClass === "permanent",
      };
    }
  }
  const body = line.response?.body as { error?: { message?: unknown } } | undefined;
  const message = String(body?.error?.message ?? line.error?.message ?? `the request failed (${status ?? "no status"})`);
  return { customId, kind: "error", message: `${status ?? "error"}: ${message}`, permanent: status !== null && isPermanentStatus(status) };
}

/** A file's result lines that `read` wants, read as they stream in within `budget`. */
async function fileLines(endpoint: ProviderEndpoint, fileId: string | null | undefined, read: ResultRead, budget: ReadBudget): Promise<LineResult[]> {
  if (!fileId || budget.cut) return [];
  const out: LineResult[] = [];
  for await (const text of streamLines(await clientFor(endpoint).files.content(fileId), budget)) {
    const line = text.trim() ? lineResult(text) : null;
    if (line && read.wanted.has(line.customId)) out.push(line);
  }
  return out;
}

export const openAiBatch: BatchApi = {
  maxRequests: 50_000,
  maxBytes: 200 * 1024 * 1024,

  line: (customId: string, request: ModelRequest) =>
    request.embedding
      ? JSON.stringify({ custom_id: customId, method: "POST", url: EMBEDDINGS, body: embeddingParams(request) })
      : JSON.stringify({ custom_id: customId, method: "POST", url: CHAT, body: chatParams(request, { nativeJson: true }) }),

  async submit(endpoint, lines, localId) {
    const client = clientFor(endpoint);
    const file = await client.files.create({ file: await toFile(new Blob([lines.join("\n") + "\n"]), `fanout-${localId}.jsonl`), purpose: "batch" });
    const batch = await client.batches.create({
      input_file_id: file.id,
      endpoint: lines[0]?.includes(`"url":"${EMBEDDINGS}"`) ? EMBEDDINGS : CHAT, // a batch is one stage's lines: all of one kind
      completion_window: "24h",
      metadata: { fanout_batch: localId },
    });
    return batch.id;
  },

  async retrieve(endpoint, providerId): Promise<BatchState> {
    const batch = await clientFor(endpoint).batches.retrieve(providerId);
    const counts = batch.request_counts;
    const failed = batch.status === "failed";
    return {
      phase: failed ? "failed" : ENDED.has(batch.status) ? "ended" : "running",
      status: batch.status,
      completed: counts?.completed ?? 0,
      failed: counts?.failed ?? 0,
      error: failed ? batch.errors?.data?.map((e) => e.message).join("; ") || "the provider refused the batch" : null,
    };
  },

  async results(endpoint, providerId, _forcedTool, read) {
    const batch = await clientFor(endpoint).batches.retrieve(providerId);
    const budget: ReadBudget = { left: MAX_RESULT_CHARS, lineMax: MAX_RESULT_LINE_CHARS, cut: false };
    const lines = [...(await fileLines(endpoint, batch.output_file_id, read, budget)), ...(await fileLines(endpoint, batch.error_file_id, read, budget))];
    return { lines, cut: budget.cut };
  },

  async cancel(endpoint, providerId) {
    await clientFor(endpoint).batches.cancel(providerId);
  },

  async find(endpoint, localId, createdAt) {
    // Newest first: every batch the key made since this one was created (a minute's slack for clocks), not only the last 100.
    let seen = 0;
    for await (const batch of clientFor(endpoint).batches.list({ limit: 100 })) {
      if (batch.metadata?.fanout_batch === localId) return batch.id;
      if (batch.created_at * 1000 < createdAt - 60_000 || ++seen >= MAX_FOUND_BATCHES) return null;
    }
    return null;
  },

  async verify(endpoint, providerId, localId) {
    const batch = await clientFor(endpoint).batches.retrieve(providerId);
    return batch.id === providerId && batch.metadata?.fanout_batch === localId;
  },
};
