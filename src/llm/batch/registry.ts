/** The providers with a batch API (contract v3: the others refuse `batch` with `unsupported_execution_mode`). */
import type { Provider } from "../models";
import { anthropicBatch } from "./anthropic-batch";
import { openAiBatch } from "./openai-batch";
import type { BatchApi } from "./types";

const APIS: Partial<Record<Provider, BatchApi>> = { openai: openAiBatch, anthropic: anthropicBatch };

export const batchApiOf = (provider: Provider): BatchApi | null => APIS[provider] ?? null;
