/** POST /v1/embed submissions: the model must embed (Anthropic has no embeddings API), the template must read `item`; then the shared submission. */
import { baseSpec, submitJob, type SubmitAnswer } from "../../jobs/submit";
import type { TaskDefaults } from "../task-call";
import type { CallSpec } from "../../engine/types";
import { checkFieldCaps } from "../../jobs/field-caps";
import { newId } from "../../lib/ids";
import { invalidRequest } from "../../lib/errors";
import { parseModel } from "../../llm/models";
import { EMBEDDING_SCHEMA } from "../../llm/embeddings";
import { itemCall } from "../task-call";
import { embedOperator, type EmbedJobSpec } from "./plan";
import { DEFAULT_EMBED_TEMPLATE, type EmbedRequest } from "./schema";

const EMBEDDING_PROVIDERS = new Set(["openai", "openai-compatible", "workers-ai"]);

type EmbeddingDefaults = Omit<TaskDefaults, "system_prompt" | "temperature" | "max_tokens" | "retry_guidance" | "prompt_cache">;

/** What an embedding needs of a job's fields, none of the generation ones: no system prompt, no sampling, no output bound, no guidance, no prompt cache. */
const withoutGeneration = <B extends EmbeddingDefaults>(body: B) => ({
  ...body,
  system_prompt: null,
  temperature: null,
  max_tokens: null,
  retry_guidance: "",
  prompt_cache: false,
});

/**
 * An embedding call of `model` (400 unless its provider embeds; `field`: the request's field that
 * names it) rendering `template` with `item`: none of a job's generation fields (no system prompt,
 * no sampling, no output bound, no guidance, no prompt cache), no fallbacks.
 */
export function embeddingCall(
  env: Env,
  body: EmbeddingDefaults,
  parts: { model: string; field: string; template: string; templateField: string; dimensions: number | null; packed?: true },
): CallSpec {
  const { provider } = parseModel(parts.model);
  if (!EMBEDDING_PROVIDERS.has(provider)) {
    const message = `${provider} has no embeddings API: use openai/text-embedding-3-small (or -large), an openai-compatible server's model, or a Workers AI embedding model`;
    throw invalidRequest(`${parts.model} cannot embed.`, [{ path: parts.field, message }]);
  }
  const call = itemCall(env, withoutGeneration(body), {
    template: parts.template,
    field: parts.templateField,
    outputSchema: EMBEDDING_SCHEMA,
    model: parts.model,
  });
  return { ...call, fallbacks: [], embedding: { dimensions: parts.dimensions, ...(parts.packed ? { packed: true as const } : {}) } };
}

export async function submitEmbedJob(env: Env, tenantId: string, body: EmbedRequest, idempotencyKey: string | null, dryRun = false): Promise<SubmitAnswer> {
  checkFieldCaps(body);
  const template = body.template ?? DEFAULT_EMBED_TEMPLATE;
  const call = embeddingCall(env, body, { model: body.model, field: "model", template, templateField: "template", dimensions: body.dimensions ?? null });
  const spec: EmbedJobSpec = { ...baseSpec(newId("job"), tenantId, { ...body, fallbacks: [] }), type: "embed", call };
  return submitJob(
    env,
    tenantId,
    { spec, operator: embedOperator, body: withoutGeneration(body), inputs: body.inputs, values: body.inputs },
    idempotencyKey,
    dryRun,
  );
}
