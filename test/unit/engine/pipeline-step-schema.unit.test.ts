/**
 * The OpenAPI document's pipeline steps (src/operators/pipeline/step-schema.ts) against the reader
 * that checks them (steps.ts): the guide's pipelines and a step of every type with every field
 * parse in both; shapes the reader refuses (an unknown type or field, a bad id, a batch where
 * batches do not go, a job field on an operator step, a bad context) the schema refuses too.
 */
import { describe, expect, it } from "vitest";
import operatorsGuide from "../../../docs/operators.md?raw";
import readme from "../../../README.md?raw";
import { PipelineStepDefinitionSchema } from "../../../src/operators/pipeline/step-schema";
import { readSteps } from "../../../src/operators/pipeline/steps";
import type { TaskDefaults } from "../../../src/operators/task-call";
import { InputError } from "../../../src/lib/errors";

const DEFAULTS: TaskDefaults = { model: "openai/m", max_retries: 1, concurrency: 4, metadata: {}, timeout_secs: 60, retry_guidance: "retry" };
const INPUTS = { docs: ["a", "b"], topic: "ferns", papers: [{ title: "t" }] };

/** The reader's verdict: null when it accepts the steps, else its first problem's path. */
function reader(steps: unknown[], inputs: Record<string, unknown> = INPUTS): string | null {
  try {
    readSteps({} as Env, DEFAULTS, inputs, undefined, steps);
    return null;
  } catch (err) {
    if (err instanceof InputError) return err.details[0]?.path ?? err.message;
    throw err;
  }
}

const documented = (step: unknown) => PipelineStepDefinitionSchema.safeParse(step).success;

/** The JSON pipelines of the README and the operators guide (`<!-- example: POST /v1/pipelines… -->`). */
function guidePipelines(): { name: string; body: { inputs?: Record<string, unknown>; steps: unknown[] } }[] {
  const text = `${readme}\n${operatorsGuide}`;
  return [...text.matchAll(/<!-- example: (POST \/v1\/pipelines[^>]*?) -->\n```json\n([\s\S]*?)```/g)].map((m) => ({
    name: m[1] as string,
    body: JSON.parse(m[2] as string),
  }));
}

const llm = (id: string, extra: Record<string, unknown> = {}) => ({ id, type: "llm", prompt_template: `About {{ topic }} ${id}`, ...extra });

const EVERY_TYPE: unknown[] = [
  llm("outline", {
    model: "openai/gpt-6-luna",
    system_prompt: "Be brief",
    output_schema: { type: "object" },
    max_tokens: 100,
    temperature: 0.2,
    context_management: { inherit_context: "subset", subset: ["topic"], accumulate_data: true, accumulation_format: "full_output" },
  }),
  llm("each", {
    prompt_template: "{{ doc }} {{ hint }} {{ n }}",
    batch: { items: "${docs}", as: "doc", max_concurrent: 4, error_handling: "continue" },
    execution: { mode: "batch" },
    inputs: { hint: { task: { id: "hinted", prompt_template: "A hint on {{ topic }}", max_tokens: 20 } }, n: 3 },
  }),
  { id: "helper", type: "agent", prompt_template: "Investigate {{ topic }}", max_turns: 3, tools: [], read_only: true },
  {
    id: "fold",
    type: "reduce",
    inputs_from: "${docs}",
    initial_value: "",
    inner_task: { prompt_template: "{{ item }}" },
    reduction_task: { prompt_template: "{{ accumulator }} {{ current_result }}" },
  },
  {
    id: "outer",
    type: "sequential",
    context_management: { inherit_context: "full" },
    steps: [llm("inner"), { id: "deeper", type: "sequential", steps: [llm("deepest")] }],
  },
  {
    id: "screen",
    type: "filter",
    inputs_from: "${papers}",
    predicate_template: "Keep {{ item.title }}?",
    cascade: { model: "openai/gpt-6-luna", accept_above: 0.9, reject_below: 0.1 },
  },
  {
    id: "label",
    type: "classify",
    inputs_from: "${papers}",
    prompt_template: "{{ item.title }}",
    categories: [{ name: "a" }, { name: "b", description: "the rest" }],
    model: "openai/gpt-6-sol",
  },
  { id: "best", type: "rank", inputs_from: "${screen.items}", k: 1, criteria: "Most influential", prompt_template: "{{ item.title }}" },
  {
    id: "same",
    type: "resolve",
    inputs_from: "${papers}",
    comparison_template: "{{ item_a.title }} / {{ item_b.title }}",
    blocking: { keys: ["title"] },
    timeout_secs: 30,
  },
];

describe("the document's pipeline steps", () => {
  it("describe every pipeline of the guides", () => {
    const pipelines = guidePipelines().filter((p) => !p.name.includes("XML"));
    expect(pipelines.length).toBeGreaterThanOrEqual(2);
    for (const { name, body } of pipelines) {
      expect(reader(body.steps, body.inputs ?? {}), name).toBeNull();
      for (const step of body.steps) expect(PipelineStepDefinitionSchema.safeParse(step).error?.issues ?? [], `${name}: ${JSON.stringify(step)}`).toEqual([]);
    }
  });

  it("describe a step of every type with its fields, as the reader takes them", () => {
    expect(reader(EVERY_TYPE)).toBeNull();
    for (const step of EVERY_TYPE) expect(PipelineStepDefinitionSchema.safeParse(step).error?.issues ?? [], JSON.stringify(step)).toEqual([]);
  });

  it.each([
    ["an unknown type", { id: "x", type: "map", prompt_template: "{{ topic }}" }],
    ["no id", { type: "llm", prompt_template: "{{ topic }}" }],
    ["an id that is not an identifier", { id: "two words", type: "llm", prompt_template: "{{ topic }}" }],
    ["an unknown field", llm("x", { prompt: "hi" })],
    ["an empty prompt_template", llm("x", { prompt_template: "" })],
    [
      "a batch on a reduce step",
      {
        id: "x",
        type: "reduce",
        inputs_from: "${docs}",
        reduction_task: { prompt_template: "{{ accumulator }} {{ current_result }}" },
        batch: { items: "${docs}" },
      },
    ],
    ["a batch without items", llm("x", { batch: { as: "doc" } })],
    ["a batch of 0 at a time", llm("x", { prompt_template: "{{ item }}", batch: { items: "${docs}", max_concurrent: 0 } })],
    ["an unknown batch field", llm("x", { prompt_template: "{{ item }}", batch: { items: "${docs}", size: 2 } })],
    ["a reduce step without its reduction", { id: "x", type: "reduce", inputs_from: "${docs}" }],
    ["a job field on an operator step", { id: "x", type: "filter", inputs_from: "${papers}", predicate_template: "{{ item.title }}?", concurrency: 4 }],
    [
      "a batch on an operator step",
      { id: "x", type: "filter", inputs_from: "${papers}", predicate_template: "{{ item.title }}?", batch: { items: "${papers}" } },
    ],
    ["an operator step without its list", { id: "x", type: "filter", predicate_template: "{{ item.title }}?" }],
    ["an unknown context setting", llm("x", { context_management: { inherit_context: "some" } })],
    ["a sequential step with no steps", { id: "x", type: "sequential", steps: [] }],
  ])("refuse what the reader refuses: %s", (_name, step) => {
    expect(reader([step])).not.toBeNull();
    expect(documented(step)).toBe(false);
  });
});
