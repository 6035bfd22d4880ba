/**
 * Anthropic's Message Batches through the official SDK (retries off): each line is
 * `{custom_id, params}` with the same Messages body a realtime call sends; results (kept 29 days)
 * are read once the batch has `ended`, as `succeeded`, `errored`, `expired` or `canceled` lines.
 * There is no metadata to find a batch by: a restart between the provider's answer and the
 * coordinator's write of its id submits those lines again (see batch-runner.ts). Caps: 100,000
 * requests or 256 MB a batch.
 */
import type { Message } from "@anthropic-ai/sdk/resources/messages";
import type { BatchCreateParams } from "@anthropic-ai/sdk/resources/messages/batches";
import { clientFor, messageParams, readMessage } from "../anthropic";
import { ProviderFailure } from "../errors";
import type { ModelRequest } from "../types";
import { MAX_RESULT_CHARS, MAX_RESULT_LINE_CHARS, type BatchApi, type BatchState, type LineResult } from "./types";

/** Error types a retry cannot change. */
const PERMANENT = new Set(["invalid_request_error", "authentication_error", "permission_error", "not_found_error", "request_too_large"]);

export const anthropicBatch: BatchApi = {
  maxRequests: 100_000,
  maxBytes: 256 * 1024 * 1024,

  line: (customId: string, request: ModelRequest) => JSON.stringify({ custom_id: customId, params: messageParams(request).params }),

  async submit(endpoint, lines) {
    const requests = lines.map((l) => JSON.parse(l) as BatchCreateParams.Request);
    return (await clientFor(endpoint).messages.batches.create({ requests })).id;
  },

  async retrieve(endpoint, providerId): Promise<BatchState> {
    const batch = await clientFor(endpoint).messages.batches.retrieve(providerId);
    const c = batch.request_counts;
    return {
      phase: batch.processing_status === "ended" ? "ended" : "running",
      status: batch.processing_status,
      completed: c.succeeded,
      failed: c.errored + c.expired + c.canceled,
      error: null,
    };
  },

  async results(endpoint, providerId, forcedTool, read) {
    const out: LineResult[] = [];
    let left = MAX_RESULT_CHARS;
    for await (const line of await clientFor(endpoint).messages.batches.results(providerId)) {
      const customId = line.custom_id;
      if (!read.wanted.has(customId)) continue;
      const result = line.result;
      // The SDK hands the lines parsed, one at a time: each is measured as the JSON it came as.
      const size = JSON.stringify(result).length;
      if (size > MAX_RESULT_LINE_CHARS) continue; // missing: sent again in a later batch
      left -= size;
      if (left < 0) return { lines: out, cut: true };
      if (result.type === "succeeded") {
        try {
          out.push({ customId, kind: "answer", response: readMessage(result.message as Message, forcedTool) });
        } catch (err) {
          out.push({
            customId,
            kind: "error",
            message: err instanceof Error ? err.message : String(err),
            permanent: err instanceof ProviderFailure && err.failureClass === "permanent",
          });
        }
      } else if (result.type === "errored") {
        const type = result.error.error.type;
        out.push({ customId, kind: "error", message: `${type}: ${result.error.error.message}`, permanent: PERMANENT.has(type) });
      } else out.push({ customId, kind: result.type === "expired" ? "expired" : "cancelled" });
    }
    return { lines: out, cut: false };
  },

  async cancel(endpoint, providerId) {
    await clientFor(endpoint).messages.batches.cancel(providerId);
  },

  find: async () => null,

  async verify(endpoint, providerId, _localId, requests) {
    const batch = await clientFor(endpoint).messages.batches.retrieve(providerId);
    const c = batch.request_counts;
    return batch.id === providerId && c.processing + c.succeeded + c.errored + c.canceled + c.expired === requests;
  },
};
