/**
 * Request schema of POST /v1/pipelines. The top-level fields are zod's; `steps` (recursive, with
 * the contract's exact messages at exact paths) and `context_management` are read by ./steps.
 */
import { z } from "@hono/zod-openapi";
import { baseJobFields } from "../base-fields";
import { MAX_STEPS } from "./steps";
import { executionField } from "../execution-field";
import { contextManagementRef, stepsDocumentation } from "./step-schema";

export const PipelineRequestSchema = z
  .strictObject({
    inputs: z.record(z.string(), z.unknown()).default({}).openapi({ description: "The shared store's named inputs" }),
    // Read by ./steps (the contract's messages); the document shows its shape (./step-schema.ts).
    context_management: z
      .record(z.string(), z.unknown())
      .nullish()
      .openapi({ anyOf: [contextManagementRef, { type: "null" }] }),
    steps: z
      .array(z.record(z.string(), z.unknown()))
      .min(1)
      .max(MAX_STEPS)
      .openapi({
        ...stepsDocumentation,
        description:
          "Steps run in order: llm (optionally a batch; `execution` runs its calls through the provider's batch API), agent, reduce, sequential (nested steps, ≤ 5 levels), and the operators filter, classify, rank and resolve over the list at `inputs_from`, and join over the lists at `left_from` and `right_from` (each with its operator's fields; its stages are `<id>/<stage>`)",
      }),
    ...baseJobFields,
    ...executionField,
  })
  .openapi("PipelineRequest");

export type PipelineRequest = z.infer<typeof PipelineRequestSchema>;
