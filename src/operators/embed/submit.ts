/** POST /v1/embed submissions: the model must embed (Anthropic has no embeddings API), the template must read `item`; then the shared submission. */
import { baseSpec, submitJob, type SubmitAnswer } from "../../jobs/submit";
import { checkFieldCaps } from "../../jobs/field-caps";
import { newId } from "../../lib/ids";
import { invalidRequest } from "../../lib/errors";
import { parseModel } from "../../llm/models";
import { EMBEDDING_SCHEMA } from "../../llm/embeddings";
import { itemCall } from "../task-call";
import { embedOperator, type EmbedJobSpec } from "./plan";
import { DEFAULT_EMBED_TEMPLATE, type EmbedRequest } from "./schema";

const EMBEDDING_PROVIDERS = new Set(["openai", "openai-compatible", "workers-ai"]);

export async function submitEmbedJob(env: Env, tenantId: string, body: EmbedRequest, idempotencyKey: string | null, dryRun = false): Promise<SubmitAnswer> {
  checkFieldCaps(body);
  const { provider } = parseModel(body.model);
  if (!EMBEDDING_PROVIDERS.has(provider)) {
    const message = `${provider} has no embeddings API: use openai/text-embedding-3-small (or -large), an openai-compatible server's model, or a Workers AI embedding model`;
    throw invalidRequest(`${body.model} cannot embed.`, [{ path: "model", message }]);
  }
  // What the call needs of a job's fields an embedding has none of: no system prompt, no sampling, no output bound, no guidance.
  const defaults = { ...body, system_prompt: null, temperature: null, max_tokens: null, retry_guidance: "", prompt_cache: false };
  const call = itemCall(env, defaults, { template: body.template ?? DEFAULT_EMBED_TEMPLATE, field: "template", outputSchema: EMBEDDING_SCHEMA });
  const spec: EmbedJobSpec = {
    ...baseSpec(newId("job"), tenantId, { ...body, fallbacks: [] }),
    type: "embed",
    call: { ...call, embedding: { dimensions: body.dimensions ?? null } },
  };
  return submitJob(env, tenantId, { spec, operator: embedOperator, body: defaults, inputs: body.inputs, values: body.inputs }, idempotencyKey, dryRun);
}
