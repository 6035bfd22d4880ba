/**
 * Runs one attempt of one map item: render the prompt, call the model, extract JSON, validate.
 * Never throws: every failure becomes an AttemptOutcome the retry policy understands.
 */
import { extractJson } from "../output/extract-json";
import { compileOutputSchema, type OutputValidator } from "../output/validate";
import { compileTemplate, type CompiledTemplate } from "../template/jinja";
import type { RenderLimits } from "../template/budget";
import { callModel } from "../llm/call-model";
import { classify, describeFailure, retryAfterMs } from "../llm/errors";
import { parseModel } from "../llm/models";
import type { ProviderEndpoint, Usage } from "../llm/types";
import { promptWithGuidance, type AttemptOutcome } from "./retry-policy";
import type { MapJobSpec, MapTask } from "./spec";

const NO_USAGE: Usage = { input_tokens: 0, output_tokens: 0 };

/** Per-job compiled artefacts, cached by the worker that runs the job's attempts. */
export interface CompiledJob {
  template: CompiledTemplate;
  validator: OutputValidator | null;
}

export function compileJob(spec: MapJobSpec, limits: RenderLimits): CompiledJob {
  return {
    template: compileTemplate(spec.promptTemplate, "prompt_template", "item", limits),
    validator: spec.outputSchema ? compileOutputSchema(spec.outputSchema) : null,
  };
}

export function interpretText(text: string, job: CompiledJob, maxOutputBytes: number, usage: Usage): AttemptOutcome {
  if (!job.validator) {
    if (text.length > maxOutputBytes) {
      return { kind: "invalid", error: `output exceeds ${maxOutputBytes} bytes`, problems: ["the response is too long"], usage };
    }
    return { kind: "success", output: text, usage };
  }
  const parsed = extractJson(text);
  if (!parsed.ok) {
    return { kind: "invalid", error: parsed.error, problems: ["the response is not valid JSON"], usage };
  }
  const problems = job.validator.validate(parsed.value);
  if (problems.length > 0) {
    return { kind: "invalid", error: `The output does not match the schema: ${problems.join("; ")}`, problems, usage };
  }
  if (JSON.stringify(parsed.value).length > maxOutputBytes) {
    return { kind: "invalid", error: `output exceeds ${maxOutputBytes} bytes`, problems: ["the JSON is too long"], usage };
  }
  return { kind: "success", output: parsed.value, usage };
}

export async function runAttempt(
  env: Env,
  task: MapTask,
  job: CompiledJob,
  endpoint: ProviderEndpoint | null,
): Promise<AttemptOutcome> {
  const { spec } = task;
  let prompt: string;
  try {
    prompt = promptWithGuidance(job.template.render(task.input), spec.retryGuidance, task.problems);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return { kind: "permanent", error: `The template could not be rendered for this item: ${message}`, errorKind: "validation", usage: NO_USAGE };
  }
  try {
    const response = await callModel(
      env,
      {
        model: parseModel(spec.model),
        system: spec.systemPrompt,
        messages: [{ role: "user", content: prompt }],
        temperature: spec.temperature,
        maxTokens: spec.maxTokens,
        timeoutMs: spec.timeoutMs,
        outputSchema: spec.outputSchema,
      },
      endpoint,
    );
    return interpretText(response.text, job, spec.maxOutputBytes, response.usage);
  } catch (err) {
    const error = describeFailure(err);
    switch (classify(err)) {
      case "timeout":
        return { kind: "timeout", error: `The model call timed out after ${spec.timeoutMs / 1000} s.`, usage: NO_USAGE };
      case "transient":
        return { kind: "transient", error, retryAfterMs: retryAfterMs(err) ?? null, usage: NO_USAGE };
      case "permanent":
        return { kind: "permanent", error, errorKind: "llm_error", usage: NO_USAGE };
    }
  }
}
