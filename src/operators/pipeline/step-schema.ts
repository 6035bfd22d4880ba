/**
 * The pipeline's steps as the OpenAPI document describes them: one schema per step type,
 * discriminated by `type` (`PipelineStepDefinition`), a `sequential` step's `steps` a list of the
 * same (recursive, by reference). Other languages generate their clients from it.
 *
 * The request is still read by ./steps.ts, whose messages and paths the contract fixes; this
 * schema only describes it. test/unit/pipeline-step-schema.unit.test.ts holds the two together:
 * every pipeline the guides and tests send parses here, and what steps.ts refuses for its shape
 * is refused here too. The operator step types are derived from their operators' request schemas
 * (./operator-steps.ts), so a new one is described with no line here.
 */
import { z } from "@hono/zod-openapi";
import { AgentStepFields } from "./agent-step";
import { DEFAULT_MAX_CONCURRENT, MAX_CONCURRENT } from "./batch";
import { IDENTIFIER } from "./refs";
import { OPERATOR_STEPS } from "./operator-steps";
import { JOB_FIELDS, STEP_FIELDS } from "./operator-step-fields";
import { callOverrideFields } from "../base-fields";
import { ExecutionSchema } from "../execution-field";

export const STEP_DEFINITION = "PipelineStepDefinition";
const STEP_REF = { $ref: `#/components/schemas/${STEP_DEFINITION}` };

const Identifier = z.string().regex(IDENTIFIER);
const Reference = z.string().openapi({
  description: "A reference into the shared store: `${name}` or `${name.path[0]}` (a pipeline input or an earlier step's output)",
  example: "${documents}",
});

export const ContextManagementSchema = z
  .strictObject({
    inherit_context: z
      .enum(["full", "none", "subset"])
      .optional()
      .openapi({ description: "What the step's templates see of the shared store: all of it, only the step's own inputs, or those and the names in `subset`" }),
    accumulate_data: z.boolean().optional().openapi({ description: "The templates also see `accumulated`: one entry per earlier step" }),
    accumulation_format: z
      .enum(["notes_only", "full_output"])
      .optional()
      .openapi({ description: "Each `accumulated` entry: the output's `notes` only, or the whole output" }),
    subset: z.array(z.string()).optional().openapi({ description: "With `inherit_context: subset`: the store's names the step sees" }),
  })
  .openapi("ContextManagement", {
    description: "How much of the shared store a step's templates see (on the pipeline, a sequential step, or a step; the nearest wins)",
  });

/** The fields of one model call in a step (the pipeline's are the defaults). */
const callFields = {
  prompt_template: z.string().min(1).openapi({ description: "A Jinja2 template over the step's inputs and the shared store" }),
  ...callOverrideFields,
};

const InputTaskSchema = z
  .strictObject({
    id: Identifier.optional(),
    type: z.literal("llm").optional(),
    context_management: ContextManagementSchema.nullish(),
    inputs: z
      .record(z.string(), z.unknown())
      .optional()
      .openapi({ description: "Named inputs: references or literal values (an input task has no input tasks of its own)" }),
    ...callFields,
  })
  .openapi("PipelineInputTask", { description: "An llm call made before its step, whose output is the step's input of that name" });

/** Any JSON value (a literal input), spelled out: an empty schema in a union would match anything and say nothing. */
const JsonValue = z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(z.unknown()), z.record(z.string(), z.unknown())]);

const InputsSchema = z
  .record(z.string(), z.union([z.strictObject({ task: InputTaskSchema }), JsonValue]))
  .optional()
  .openapi({ description: 'The step\'s named inputs: a reference (`${name}`), an input task (`{"task": {…}}`), or a literal value' });

/** What every step has. */
const stepFields = (type: string) => ({
  id: Identifier.openapi({ description: "Unique in the pipeline (step ids and input names are one namespace); its output is stored under it" }),
  type: z.literal(type),
  context_management: ContextManagementSchema.nullish(),
});

const BatchSchema = z
  .strictObject({
    items: Reference.openapi({ description: "The list the step runs over, one call (or agent) per element" }),
    as: Identifier.optional().openapi({ description: "The element's name in the templates (default `item`)" }),
    error_handling: z
      .enum(["fail_fast", "continue"])
      .optional()
      .openapi({ description: "fail_fast (default): the step fails at its first failed element; continue: it records the failures and goes on" }),
    max_concurrent: z
      .number()
      .int()
      .min(1)
      .max(MAX_CONCURRENT)
      .optional()
      .openapi({ description: `Elements in flight at most (default ${DEFAULT_MAX_CONCURRENT})` }),
  })
  .openapi("PipelineBatch", { description: "A batch node: the step runs once per element of a list" });

const LlmStepSchema = z
  .strictObject({ ...stepFields("llm"), inputs: InputsSchema, ...callFields, batch: BatchSchema.optional(), execution: ExecutionSchema.optional() })
  .openapi("LlmStep", { description: "One model call (or one per element, with `batch`)" });

const AgentStepSchema = AgentStepFields.extend({ ...stepFields("agent"), inputs: InputsSchema, batch: BatchSchema.optional() })
  .strict()
  .openapi("AgentStep", { description: "One agentic session (or one per element, with `batch`), with the /v1/agentic-map fields for one item" });

const CallTaskSchema = z.strictObject(callFields).openapi("PipelineCallTask", { description: "One model call of a reduce step" });

const ReduceStepSchema = z
  .strictObject({
    ...stepFields("reduce"),
    inputs: InputsSchema,
    inputs_from: Reference.openapi({ description: "The list to fold" }),
    initial_value: z.unknown().optional().openapi({ description: "The accumulator before the first element" }),
    inner_task: CallTaskSchema.nullish().openapi({ description: "A call per element first (its output is `current_result`); omitted: the element itself" }),
    reduction_task: CallTaskSchema.openapi({ description: "The fold's call: reads `accumulator` and `current_result`" }),
  })
  .openapi("ReduceStep", { description: "An ordered fold over a list of the shared store" });

const SequentialStepSchema = z
  .strictObject({
    ...stepFields("sequential"),
    steps: z
      .array(z.unknown())
      .min(1)
      .openapi({ type: "array", items: STEP_REF, description: "The nested steps, run in order (at most 5 levels deep); the last one's output is this step's" }),
  })
  .openapi("SequentialStep", { description: "Nested steps run in order" });

/** The pipeline's fields an operator step inherits when it sets none (its operator's schema may require them). */
const INHERITED = ["model", "system_prompt", "max_tokens", "temperature", "timeout_secs", "execution"];

/** An operator's step type: its request's fields but the job's, those the pipeline gives optional, and the step's own. */
function operatorStepSchema(type: string): z.ZodType {
  const step = OPERATOR_STEPS[type]!;
  const schema = step.schema as z.ZodObject;
  const keys = Object.keys(schema.shape);
  const mask = (keep: (key: string) => boolean) => Object.fromEntries(keys.filter(keep).map((k) => [k, true])) as Record<string, never>;
  const lists = step.lists ?? null; // a step of two lists (a join's): each list field stands for a request field
  const omit = mask((k) => JOB_FIELDS.has(k) || STEP_FIELDS.includes(k) || Object.values(lists ?? {}).includes(k));
  const partial = mask((k) => INHERITED.includes(k));
  const name = `${type[0]!.toUpperCase()}${type.slice(1)}Step`;
  return schema
    .omit(omit)
    .partial(partial)
    .extend({
      ...stepFields(type),
      inputs: InputsSchema,
      ...(lists
        ? Object.fromEntries(
            Object.entries(lists).map(([field, stands]) => [field, Reference.openapi({ description: `The ${stands} list the ${type} runs over` })]),
          )
        : { inputs_from: Reference.openapi({ description: `The list the ${type} runs over` }) }),
    })
    .strict()
    .openapi(name, {
      description: `The /v1/${type} operator over ${lists ? "lists" : "a list"} of the shared store: its request's fields but the job's (those are the pipeline's); its stages are \`<id>/<stage>\``,
    });
}

export const PipelineStepDefinitionSchema = z
  .discriminatedUnion("type", [
    LlmStepSchema,
    AgentStepSchema,
    ReduceStepSchema,
    SequentialStepSchema,
    ...Object.keys(OPERATOR_STEPS).map(operatorStepSchema),
  ] as unknown as [z.ZodObject, ...z.ZodObject[]])
  .openapi(STEP_DEFINITION, { description: "A step of a pipeline, by its `type`" });

/** `steps` of POST /v1/pipelines as the document shows it (read by ./steps.ts). */
export const stepsDocumentation = { type: "array" as const, items: STEP_REF };
export const contextManagementRef = { $ref: "#/components/schemas/ContextManagement" };

/** Registers the step schemas as components of the document (the request's `steps` refers to them). */
export function registerStepSchemas(registry: { register: (name: string, schema: z.ZodType) => unknown }): void {
  registry.register(STEP_DEFINITION, PipelineStepDefinitionSchema);
  registry.register("ContextManagement", ContextManagementSchema);
}
