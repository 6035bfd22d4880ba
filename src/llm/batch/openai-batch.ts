/**
 * OpenAI's Batch API through the official SDK (retries off): the lines are a JSONL file uploaded
 * with purpose `batch`, the batch runs `/v1/chat/completions` within the `24h` window and carries
 * `metadata.fanout_batch` (the coordinator's id, so a restart finds it). Results: the output file
 * (status 200 lines) and the error file (failed requests; `batch_expired` for lines the window
 * closed on). Caps: 50,000 requests or 200 MB a batch.
 */
import { toFile } from "openai";
import { chatParams, clientFor, readCompletion } from "../openai";
import { ProviderFailure } from "../errors";
import type { ModelRequest, ProviderEndpoint } from "../types";
import { isPermanentStatus, type BatchApi, type BatchState, type LineResult } from "./types";

const ENDED = new Set(["completed", "expired", "cancelled"]);

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
      return { customId, kind: "answer", response: readCompletion(line.response?.body) };
    } catch (err) {
      return { customId, kind: "error", message: err instanceof Error ? err.message : String(err), permanent: err instanceof ProviderFailure && err.failureClass === "permanent" };
    }
  }
  const body = line.response?.body as { error?: { message?: unknown } } | undefined;
  const message = String(body?.error?.message ?? line.error?.message ?? `the request failed (${status ?? "no status"})`);
  return { customId, kind: "error", message: `${status ?? "error"}: ${message}`, permanent: status !== null && isPermanentStatus(status) };
}

async function fileLines(endpoint: ProviderEndpoint, fileId: string | null | undefined): Promise<LineResult[]> {
  if (!fileId) return [];
  const text = await (await clientFor(endpoint).files.content(fileId)).text();
  return text.split("\n").flatMap((l) => (l.trim() ? (lineResult(l) ?? []) : []));
}

export const openAiBatch: BatchApi = {
  maxRequests: 50_000,
  maxBytes: 200 * 1024 * 1024,

  line: (customId: string, request: ModelRequest) =>
    JSON.stringify({ custom_id: customId, method: "POST", url: "/v1/chat/completions", body: chatParams(request, { nativeJson: true }) }),

  async submit(endpoint, lines, localId) {
    const client = clientFor(endpoint);
    const file = await client.files.create({ file: await toFile(new Blob([lines.join("\n") + "\n"]), `fanout-${localId}.jsonl`), purpose: "batch" });
    const batch = await client.batches.create({ input_file_id: file.id, endpoint: "/v1/chat/completions", completion_window: "24h", metadata: { fanout_batch: localId } });
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
      error: failed ? (batch.errors?.data?.map((e) => e.message).join("; ") || "the provider refused the batch") : null,
    };
  },

  async results(endpoint, providerId) {
    const batch = await clientFor(endpoint).batches.retrieve(providerId);
    return [...(await fileLines(endpoint, batch.output_file_id)), ...(await fileLines(endpoint, batch.error_file_id))];
  },

  async cancel(endpoint, providerId) {
    await clientFor(endpoint).batches.cancel(providerId);
  },

  async find(endpoint, localId) {
    const page = await clientFor(endpoint).batches.list({ limit: 100 });
    return page.data.find((b) => b.metadata?.fanout_batch === localId)?.id ?? null;
  },
};
