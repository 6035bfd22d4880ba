/**
 * Prototype names (`__proto__`, `constructor`, `prototype`) are never step ids, input names,
 * batch aliases or reference paths: a step id `__proto__` once passed validation and failed the
 * job at run time after spending tokens. Each is refused at submission, naming its field. And a
 * map-reduce dedupe field that is a typo is refused (or, without a schema, reported).
 */
import { describe, expect, test } from "vitest";
import { ApiError, InputError } from "../../src/lib/errors";
import { MapReduceRequestSchema } from "../../src/operators/map-reduce/schema";
import { shuffle } from "../../src/operators/map-reduce/shuffle";
import { submitMapReduceJob } from "../../src/operators/map-reduce/submit";
import { parseRef } from "../../src/operators/pipeline/refs";
import { readSteps } from "../../src/operators/pipeline/steps";
import type { TaskDefaults } from "../../src/operators/task-call";

const DEFAULTS = { model: "openai/gpt-6-luna", timeout_secs: 60, retry_guidance: "retry" } as TaskDefaults;

function refusal(inputs: Record<string, unknown>, steps: unknown[]): { path: string; message: string }[] {
  try {
    readSteps({} as never, DEFAULTS, inputs, undefined, steps);
  } catch (err) {
    if (err instanceof InputError) return err.details as { path: string; message: string }[];
    throw err;
  }
  throw new Error("the pipeline was accepted");
}

describe("prototype names", () => {
  test.each(["__proto__", "constructor", "prototype"])("%s is no step id", (id) => {
    expect(refusal({}, [{ id, type: "llm", prompt_template: "x" }])).toEqual([
      { path: "steps[0].id", message: "id must not be __proto__, constructor or prototype" },
    ]);
  });

  test.each(["${__proto__}", "${a.constructor}", "${a.b.prototype}", "${constructor[0]}"])("%s is no reference", (ref) => {
    expect(parseRef(ref).ok).toBe(false);
  });

  test("nor a batch alias, nor a reference in a step's inputs", () => {
    expect(refusal({ list: [1] }, [{ id: "s", type: "llm", prompt_template: "{{ constructor }}", batch: { items: "${list}", as: "constructor" } }])).toEqual([
      { path: "steps[0].batch.as", message: "batch.as must be a valid identifier" },
    ]);
    const details = refusal({ a: { b: 1 } }, [{ id: "s", type: "llm", prompt_template: "{{ x }}", inputs: { x: "${a.__proto__}" } }]);
    expect(details[0]?.message).toMatch(/never a field name/);
  });

  test("ordinary names still pass", () => {
    expect(
      readSteps({} as never, DEFAULTS, { list: [1] }, undefined, [{ id: "proto", type: "llm", prompt_template: "{{ item }}", batch: { items: "${list}" } }]),
    ).toHaveLength(1);
  });
});

describe("map-reduce shuffle fields", () => {
  const body = (shuffle: Record<string, unknown>, outputSchema: unknown = null) => ({
    inputs: ["d"],
    model: "openai/gpt-6-luna",
    mapper: { prompt_template: "{{ items }}", output_schema: outputSchema },
    reducer: { prompt_template: "{{ items }}" },
    shuffle,
  });

  test.each(["constructor", "a.__proto__", "prototype"])("the key %s walks no prototype: refused by the schema", (key) => {
    expect(MapReduceRequestSchema.safeParse(body({ key })).success).toBe(false);
    expect(MapReduceRequestSchema.safeParse(body({ dedupe_fields: [key] })).success).toBe(false);
  });

  test("a dedupe field the mapper's schema does not name is 400 at submission (a typo would merge distinct extractions)", async () => {
    const schema = { type: "array", items: { type: "object", properties: { category: { type: "string" }, claim: { type: "string" } } } };
    const parsed = MapReduceRequestSchema.parse(body({ dedupe_fields: ["claim", "clam"] }, schema));
    const refused = await submitMapReduceJob({} as never, "t", parsed, null, true).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).status).toBe(400);
    expect((refused as ApiError).details).toEqual([
      { path: "shuffle.dedupe_fields.1", message: "the mapper's output_schema names no field `clam` (it names `category`, `claim`)" },
    ]);
  });

  test("without a schema, a dedupe field no extraction has is reported by the shuffle", () => {
    const options = { key: "category", dedupe: "exact" as const, dedupeFields: ["clam"], conflict: "first" as const };
    const shuffled = shuffle(
      [
        {
          documents: [0],
          extractions: [
            { category: "a", claim: "x" },
            { category: "a", claim: "y" },
          ],
        },
      ],
      options,
    );
    expect(shuffled.missingDedupeFields).toEqual(["clam"]);
    expect(shuffled.merged).toBe(1); // what the typo does: both extractions look the same
    expect(shuffle([{ documents: [0], extractions: [{ category: "a", claim: "x" }] }], { ...options, dedupeFields: ["claim"] }).missingDedupeFields).toEqual(
      [],
    );
  });
});
