/**
 * A provider's batch API, as the batch executor (durable-objects/coordinator/batch-runner.ts)
 * uses it: lines built from the same requests a realtime call sends, one submission per batch,
 * its state polled, its results read once it has ended, matched back by `custom_id`.
 */
import type { ModelRequest, ModelResponse, ProviderEndpoint } from "../types";

/** One line's answer: the model's (validated later like a realtime answer), a failed request, or none. */
export type LineResult =
  | { customId: string; kind: "answer"; response: Omit<ModelResponse, "rate"> }
  | { customId: string; kind: "error"; message: string; permanent: boolean }
  | { customId: string; kind: "expired" }
  | { customId: string; kind: "cancelled" };

export interface BatchState {
  /** `ended`: its results can be read; `failed`: the provider refused the batch as a whole (none of its lines ran). */
  phase: "running" | "ended" | "failed";
  /** The provider's own word (OpenAI `status`, Anthropic `processing_status`). */
  status: string;
  completed: number;
  failed: number;
  /** Why the whole batch failed, when it did. */
  error: string | null;
}

export interface BatchApi {
  /** The provider's caps on one batch: its requests, and its size in bytes. */
  readonly maxRequests: number;
  readonly maxBytes: number;
  /** One request as a line of the batch (its JSON text). */
  line(customId: string, request: ModelRequest): string;
  /** Submits the lines as one batch; `localId` tags it (OpenAI metadata) so a restart can find it. Answers the provider's id. */
  submit(endpoint: ProviderEndpoint, lines: string[], localId: string): Promise<string>;
  retrieve(endpoint: ProviderEndpoint, providerId: string): Promise<BatchState>;
  /**
   * The lines' results of an ended batch, read as they stream in: only the lines in `read.wanted`,
   * each at most MAX_RESULT_LINE_CHARS, and MAX_RESULT_CHARS in all — past it reading stops
   * (`cut`), and the lines not read are the caller's missing ones.
   */
  results(endpoint: ProviderEndpoint, providerId: string, forcedTool: boolean, read: ResultRead): Promise<{ lines: LineResult[]; cut: boolean }>;
  cancel(endpoint: ProviderEndpoint, providerId: string): Promise<void>;
  /** The provider's id of a batch this deployment submitted as `localId` at `createdAt` (ms) and lost the answer of (a restart), or null. */
  find(endpoint: ProviderEndpoint, localId: string, createdAt: number): Promise<string | null>;
  /** Whether the batch the provider named after a submission is the one submitted: its metadata (OpenAI) or its count of requests. */
  verify(endpoint: ProviderEndpoint, providerId: string, localId: string, requests: number): Promise<boolean>;
}

/** What a results read keeps. */
export interface ResultRead {
  wanted: ReadonlySet<string>;
}

/** One result line longer than this is not read (its line counts as missing). */
export const MAX_RESULT_LINE_CHARS = 4 * 1024 * 1024;
/** The characters of results one read keeps in all (a Durable Object has 128 MB): past it the rest count as missing, sent again in a later batch. */
export const MAX_RESULT_CHARS = 32 * 1024 * 1024;

/** An HTTP status a retry cannot change (a 4xx other than 408, 409 and 429). */
export const isPermanentStatus = (status: number): boolean => status >= 400 && status < 500 && ![408, 409, 429].includes(status);
