/**
 * Runs one attempt of one call task (any operator's): render the prompt from the task's
 * variables, call the model, extract JSON, validate. Never throws: every failure becomes an
 * AttemptOutcome the retry policy understands. With the job's response cache, an identical
 * earlier call's validated answer is used instead of a call (`cached`: what that call cost).
 */
import { packVector } from "../lib/packed-vector";
import { extractJson } from "../output/extract-json";
import { compileOutputSchema, type OutputValidator } from "../output/validate";
import { compileTemplate, type CompiledTemplate } from "../template/jinja";
import type { RenderLimits } from "../template/render-budget";
import { callModel } from "../llm/call-model";
import { classify, describeFailure, headerOf, isQuotaSpent, isThrottle, retryAfterMs, unavailableOf } from "../llm/errors";
import { rateObservation } from "../llm/rate-headers";
import { parseModel } from "../llm/models";
import { cacheBreak, templatePrefix } from "../llm/prompt-cache";
import type { ModelRequest, ModelResponse, ProviderEndpoint, Usage } from "../llm/types";
import { valueProbability } from "../llm/logprobs";
import { promptWithGuidance, type AttemptOutcome } from "./retry-policy";
import { callKey, lookup, remember, type CacheScope } from "../cache/response-cache";
import type { CallSpec } from "./types";
import { sentTimeoutMs } from "./execution";

const NO_USAGE: Usage = { input_tokens: 0, output_tokens: 0 };

/** A call stage's compiled artefacts, cached by the worker that runs its attempts. */
export interface CompiledCall {
  template: CompiledTemplate;
  /** The template's text before its first variable: shared by the stage's prompts (the provider's prompt cache). */
  prefix: string;
  validator: OutputValidator | null;
  shape?: "extractions";
  /** An embedding kept packed (../lib/packed-vector.ts): its validated vector is stored as one byte a dimension. */
  packed?: true;
}

const SHAPE_PROBLEM = "the output must be a JSON list of extraction objects, or an object whose `extractions` is such a list";

/** A mapper's extractions: a list of objects, or an object whose `extractions` is one; else null. */
export function extractionsOf(value: unknown): Record<string, unknown>[] | null {
  const list = Array.isArray(value) ? value : typeof value === "object" && value !== null ? (value as { extractions?: unknown }).extractions : null;
  if (!Array.isArray(list)) return null;
  return list.every((e) => typeof e === "object" && e !== null && !Array.isArray(e)) ? (list as Record<string, unknown>[]) : null;
}

/** Its variables were checked at submission; here the template is only parsed. */
export function compileCall(call: CallSpec, limits: RenderLimits): CompiledCall {
  return {
    template: compileTemplate(call.promptTemplate, call.templateField, [], limits),
    prefix: templatePrefix(call.promptTemplate),
    validator: call.outputSchema ? compileOutputSchema(call.outputSchema) : null,
    shape: call.shape,
    ...(call.embedding?.packed ? { packed: true as const } : {}),
  };
}

export function interpretText(text: string, job: CompiledCall, maxOutputBytes: number, usage: Usage): AttemptOutcome {
  if (!job.validator && !job.shape) {
    if (text.length > maxOutputBytes) {
      return { kind: "invalid", error: `output exceeds ${maxOutputBytes} bytes`, problems: ["the response is too long"], usage };
    }
    return { kind: "success", output: text, usage };
  }
  const parsed = extractJson(text);
  if (!parsed.ok) {
    return { kind: "invalid", error: parsed.error, problems: ["the response is not valid JSON"], usage };
  }
  const problems = job.validator?.validate(parsed.value) ?? [];
  if (problems.length > 0) {
    return { kind: "invalid", error: `The output does not match the schema: ${problems.join("; ")}`, problems, usage };
  }
  if (job.shape === "extractions" && extractionsOf(parsed.value) === null) {
    return { kind: "invalid", error: `The output has the wrong shape: ${SHAPE_PROBLEM}.`, problems: [SHAPE_PROBLEM], usage };
  }
  if (JSON.stringify(parsed.value).length > maxOutputBytes) {
    return { kind: "invalid", error: `output exceeds ${maxOutputBytes} bytes`, problems: ["the JSON is too long"], usage };
  }
  return { kind: "success", output: job.packed && Array.isArray(parsed.value) ? packVector(parsed.value as number[]) : parsed.value, usage };
}

export async function runAttempt(
  env: Env,
  spec: CallSpec,
  job: CompiledCall,
  endpoint: ProviderEndpoint | null,
  vars: Record<string, unknown>,
  problems: string[] | null,
  cache: CacheScope | null = null,
): Promise<AttemptOutcome> {
  let rendered: string;
  try {
    rendered = job.template.renderVars(vars);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return { kind: "permanent", error: `The template could not be rendered for this item: ${message}`, errorKind: "validation", usage: NO_USAGE };
  }
  const key = cache ? await callKey(cache.tenantId, spec, endpoint?.baseUrl ?? null, rendered) : null;
  if (cache && key) {
    const hit = await lookup(cache, key);
    const reused = hit ? interpretText(hit.text, job, spec.maxOutputBytes, NO_USAGE) : null;
    if (hit && reused?.kind === "success") return { ...reused, cached: hit.usage };
  }
  try {
    const response = await callModel(env, callRequest(spec, job, rendered, problems), endpoint);
    const outcome = scoredByLogprobs(spec, response, interpretText(response.text, job, spec.maxOutputBytes, response.usage));
    if (cache && key && outcome.kind === "success") await remember(cache, key, { text: response.text, usage: response.usage });
    // The tier that served it prices it (../llm/prices.ts): the provider's word, else the tier asked for.
    const tier = response.serviceTier ?? spec.serviceTier;
    const answer = {
      finish: response.finishReason,
      ...(response.id ? { id: response.id } : {}),
      ...(response.responseModel ? { model: response.responseModel } : {}),
    };
    const served = tier ? { ...outcome, serviceTier: tier, answer } : { ...outcome, answer };
    return response.rate ? { ...served, rate: response.rate } : served;
  } catch (err) {
    const outcome = flexBusy(spec, failureOutcome(err, sentTimeoutMs(spec)));
    const rate = rateObservation((name) => headerOf(err, name));
    return rate ? { ...outcome, rate } : outcome;
  }
}

/**
 * The flex tier's `429 resource_unavailable` (contract v4): not billed, and back-pressure — the
 * item waits and goes again as a throttled call does (up to `max_wait_secs`, then its fallback) —
 * where the same answer on the default tier means the model has no capacity at all.
 */
function flexBusy(spec: CallSpec, outcome: AttemptOutcome): AttemptOutcome {
  if (spec.serviceTier !== "flex" || outcome.kind !== "transient" || outcome.unavailable !== "capacity") return outcome;
  return { kind: "transient", error: outcome.error, retryAfterMs: outcome.retryAfterMs, throttled: true, busy: true, usage: outcome.usage };
}

/** The request of one attempt of a call: the rendered prompt (with guidance after invalid output), its shared prefix marked for the provider's prompt cache. */
export function callRequest(spec: CallSpec, job: CompiledCall, rendered: string, problems: string[] | null): ModelRequest {
  return {
    model: parseModel(spec.model),
    system: spec.systemPrompt,
    messages: [{ role: "user", content: promptWithGuidance(rendered, spec.retryGuidance, problems) }],
    temperature: spec.temperature,
    maxTokens: spec.maxTokens,
    timeoutMs: sentTimeoutMs(spec),
    outputSchema: spec.outputSchema,
    ...(spec.logprobScore ? { logprobs: true } : {}),
    cacheBreak: spec.promptCache === false ? null : cacheBreak(spec.model, spec.systemPrompt, rendered, job.prefix),
    ...(spec.serviceTier ? { serviceTier: spec.serviceTier } : {}),
    ...(spec.embedding ? { embedding: spec.embedding } : {}),
  };
}

/**
 * A cascade's cheaper answer scored by its tokens' log-probabilities where the provider gave them:
 * its `confidence` becomes the probability of its `keep` or `label` value (`confidence_source`
 * says which it is). Without them the answer keeps the confidence it reports.
 */
export function scoredByLogprobs(spec: CallSpec, response: ModelResponse, outcome: AttemptOutcome): AttemptOutcome {
  if (!spec.logprobScore || outcome.kind !== "success" || typeof outcome.output !== "object" || outcome.output === null) return outcome;
  const p = response.logprobs ? valueProbability(response.text, response.logprobs, spec.logprobScore) : null;
  const output = p === null ? { ...outcome.output, confidence_source: "self_reported" } : { ...outcome.output, confidence: p, confidence_source: "logprobs" };
  return { ...outcome, output };
}

/** A provider's failure as an attempt's outcome; `context` prefixes its message (a batch's submission). */
export function failureOutcome(err: unknown, timeoutMs: number, context?: string): AttemptOutcome {
  const error = context ? `${context}: ${describeFailure(err)}` : describeFailure(err);
  const unavailable = unavailableOf(err);
  const why = unavailable ? { unavailable } : {};
  switch (classify(err)) {
    case "timeout":
      return { kind: "timeout", error: `The model call timed out after ${timeoutMs / 1000} s.`, usage: NO_USAGE };
    case "transient":
      return { kind: "transient", error, retryAfterMs: retryAfterMs(err) ?? null, throttled: isThrottle(err), usage: NO_USAGE, ...why };
    case "permanent":
      return isQuotaSpent(err)
        ? { kind: "permanent", error, errorKind: "llm_error", usage: NO_USAGE, quota: true, ...why }
        : { kind: "permanent", error, errorKind: "llm_error", usage: NO_USAGE, ...why };
  }
}
