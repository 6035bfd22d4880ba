/** The request of POST /v1/embed (contract v4, "Embeddings, joins, embedding blocking"). */
import { z } from "@hono/zod-openapi";
import { baseJobFields, concurrencySchema } from "../base-fields";
import { executionField } from "../execution-field";
import { MAX_DIMENSIONS } from "../../llm/embeddings";
import { MAX_MAP_CONCURRENCY } from "../../engine/limits";

export const DEFAULT_EMBED_TEMPLATE = "{{ item }}";

/** The vectors' length asked of the model (POST /v1/embed's, an embedding blocking's): its own description each. */
export const dimensionsField = (description: string) => z.number().int().min(1).max(MAX_DIMENSIONS).optional().openapi({ description });

export const EmbedRequestSchema = z
  .strictObject({
    inputs: z
      .array(z.unknown())
      .min(1, "inputs must hold at least one item")
      .openapi({ description: "The items; each is rendered into the template as `item`, and the text embedded.", example: ["a red bicycle", "a blue car"] }),
    template: z
      .string()
      .min(1)
      .optional()
      .openapi({ description: `A Jinja2 template that must read \`item\`: the text embedded (default \`${DEFAULT_EMBED_TEMPLATE}\`)` }),
    dimensions: dimensionsField("The vectors' length, where the model lets it be chosen (OpenAI's text-embedding-3 models); absent: the model's own"),
    ...baseJobFields,
    ...executionField,
    concurrency: concurrencySchema(`Embedding calls in flight at most (1–${MAX_MAP_CONCURRENCY})`),
  })
  .omit({ system_prompt: true, max_tokens: true, temperature: true, retry_guidance: true, prompt_cache: true, fallbacks: true })
  .openapi("EmbedRequest", {
    description:
      "An embedding per item: `openai/text-embedding-3-small|large` (or an `openai-compatible/…` server's), `workers-ai/@cf/baai/bge-…`. Results carry `embedding`; `execution: batch` runs through OpenAI's batch API at half the price. No fallbacks: vectors of different models cannot be compared.",
    example: { inputs: ["a red bicycle", "a blue car"], model: "openai/text-embedding-3-small" },
  });

export type EmbedRequest = z.infer<typeof EmbedRequestSchema>;
