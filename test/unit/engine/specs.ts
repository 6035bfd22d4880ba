/** Specs for operator unit tests: the fields every job has, and a model call. */
import type { CallSpec, JobSpecBase } from "../../../src/engine/types";
import type { JobType } from "../../../src/operators/registry";

export const call = (promptTemplate: string, over: Partial<CallSpec> = {}): CallSpec => ({
  model: "openai/m",
  systemPrompt: null,
  promptTemplate,
  templateField: "prompt_template",
  outputSchema: null,
  temperature: null,
  maxTokens: 10,
  timeoutMs: 60_000,
  retryGuidance: "retry",
  maxOutputBytes: 10_000,
  ...over,
});

export const base = <T extends JobType>(type: T): JobSpecBase & { type: T } => ({
  jobId: "job_unit",
  tenantId: "ten_unit",
  type,
  model: "openai/m",
  concurrency: 4,
  maxRetries: 1,
  webhook: null,
  budget: null,
});
