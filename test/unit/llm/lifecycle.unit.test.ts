/**
 * Models that retire (src/llm/lifecycle.ts): the shipped table and the deployment's
 * MODEL_RETIREMENTS over it; retired, retiring within 30 days or before the deadline, or nothing.
 * And the guard of #49: no example a user copies — README, docs, the clients' docs, the OpenAPI
 * document's examples, the dashboard's and the start banner's defaults — names a model that
 * shuts down within 90 days of the day the suite runs.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { lifecycleOf, parseRetirements, retirementOf, RETIRING_WITHIN_DAYS } from "../../../src/llm/lifecycle";

const NO_ENV = {};
const DAY = 86_400_000;
const at = (date: string) => Date.parse(`${date}T00:00:00Z`);

describe("the model lifecycle table", () => {
  it("knows the shipped shutdowns, and their dated snapshots, with the provider's replacement", () => {
    expect(retirementOf(NO_ENV, "openai/gpt-4o-mini")).toEqual({ shutdown_date: "2027-01-14", replacement: "openai/gpt-6-luna" });
    expect(retirementOf(NO_ENV, "openai/gpt-4o-mini-2024-07-18")).toEqual(retirementOf(NO_ENV, "openai/gpt-4o-mini"));
    expect(retirementOf(NO_ENV, "anthropic/claude-sonnet-4-5-20250929")).toMatchObject({ shutdown_date: "2026-11-30" });
    expect(retirementOf(NO_ENV, "openai/gpt-6-luna")).toBeNull();
    expect(retirementOf(NO_ENV, "anthropic/claude-sonnet-4-6")).toBeNull();
    // Names that are not models of the table, whatever they look like.
    for (const name of ["__proto__", "constructor", "openai/__proto__", "openai/gpt-4o-mini-tts", "toString"])
      expect(retirementOf(NO_ENV, name), name).toBeNull();
  });

  it("says retired on and after the shutdown date, retiring within 30 days or before the deadline, nothing before", () => {
    const model = "anthropic/claude-sonnet-4-5";
    expect(lifecycleOf(NO_ENV, model, at("2026-11-30"))?.state).toBe("retired");
    expect(lifecycleOf(NO_ENV, model, at("2026-11-29") + DAY - 1)?.state).toBe("retiring");
    expect(lifecycleOf(NO_ENV, model, at("2026-11-30") - RETIRING_WITHIN_DAYS * DAY)?.state).toBe("retiring");
    expect(lifecycleOf(NO_ENV, model, at("2026-11-30") - RETIRING_WITHIN_DAYS * DAY - 1)).toBeNull();
    const early = at("2026-09-01");
    expect(lifecycleOf(NO_ENV, model, early, at("2026-12-01"))?.state).toBe("retiring"); // its deadline is after the shutdown
    expect(lifecycleOf(NO_ENV, model, early, at("2026-11-29"))).toBeNull();
  });

  it("takes the deployment's MODEL_RETIREMENTS over the table: a date added or moved, a shutdown removed (null)", () => {
    const env = {
      MODEL_RETIREMENTS: JSON.stringify({
        "openai-compatible/llama-3": { shutdown_date: "2026-12-01", replacement: "openai-compatible/llama-4" },
        "openai/gpt-4o-mini": null,
        "anthropic/claude-sonnet-4-5": { shutdown_date: "2027-06-01" },
      }),
    };
    expect(retirementOf(env, "openai-compatible/llama-3")).toEqual({ shutdown_date: "2026-12-01", replacement: "openai-compatible/llama-4" });
    expect(retirementOf(env, "openai/gpt-4o-mini")).toBeNull();
    expect(retirementOf(env, "openai/gpt-4o-mini-2024-07-18")).toBeNull();
    expect(retirementOf(env, "anthropic/claude-sonnet-4-5")).toEqual({ shutdown_date: "2027-06-01", replacement: null });
    expect(retirementOf(env, "openai/gpt-4o")).toMatchObject({ shutdown_date: "2027-01-14" }); // the rest of the table holds
  });

  it("refuses a MODEL_RETIREMENTS it cannot read, saying what is wrong", () => {
    expect(() => parseRetirements("{")).toThrow("must be JSON");
    expect(() => parseRetirements("[]")).toThrow("JSON object keyed by model");
    expect(() => parseRetirements('{"openai/m": {"shutdown_date": "2026-13-45"}}')).toThrow('"openai/m".shutdown_date must be a date');
    expect(() => parseRetirements('{"openai/m": {"shutdown_date": "soon"}}')).toThrow("must be a date");
    expect(() => parseRetirements('{"openai/m": 5}')).toThrow("must be a date");
    expect(() => parseRetirements('{"openai/m": {"shutdown_date": "2027-01-01", "replacement": 7}}')).toThrow("replacement must be a model name");
    const many = Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`openai/m${i}`, null]));
    expect(() => parseRetirements(JSON.stringify(many))).toThrow("at most 1000 models");
  });
});

const ROOT = join(import.meta.dirname, "../../..");

/** Every file whose examples a user copies. */
function exampleFiles(): string[] {
  const docs = readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`);
  const schemas = readdirSync(join(ROOT, "src/schemas")).map((f) => `src/schemas/${f}`);
  const operators = readdirSync(join(ROOT, "src/operators"))
    .filter((f) => f.endsWith(".ts"))
    .map((f) => `src/operators/${f}`);
  return ["README.md", "clients/python/README.md", "assets/dash/new.js", "scripts/start-banner.mjs", "client/src/api.ts", ...docs, ...schemas, ...operators];
}

/** The model names a text uses: `<provider>/<model>` anywhere, and quoted bare names (a rate_limits key). */
function modelsIn(text: string): string[] {
  const prefixed = [...text.matchAll(/\b(openai|anthropic)\/([\w.-]+)/g)].map((m) => `${m[1]}/${m[2]}`);
  const bare = [...text.matchAll(/"((gpt-|claude-|o\d)[\w.-]*)"/g)].map((m) => `${(m[1] as string).startsWith("claude") ? "anthropic" : "openai"}/${m[1]}`);
  return [...new Set([...prefixed, ...bare])];
}

describe("the examples use current models", () => {
  it("names no model in README, docs, clients, OpenAPI examples or defaults that shuts down within 90 days", () => {
    const horizon = Date.now() + 90 * DAY;
    const found: string[] = [];
    let checked = 0;
    for (const file of exampleFiles()) {
      for (const model of modelsIn(readFileSync(join(ROOT, file), "utf8"))) {
        checked++;
        const retirement = retirementOf(NO_ENV, model);
        if (retirement && at(retirement.shutdown_date) <= horizon)
          found.push(`${file}: ${model} shuts down on ${retirement.shutdown_date} (use ${retirement.replacement ?? "a current model"})`);
      }
    }
    expect(checked).toBeGreaterThanOrEqual(10); // the scan reads the examples (each model once per file)
    expect(found).toEqual([]);
  });

  it("catches a retiring model in an example, however it is written", () => {
    expect(modelsIn('"model": "openai/gpt-4o-mini", "rate_limits": {"gpt-4.1-mini": {"rpm": 1}}')).toEqual(["openai/gpt-4o-mini", "openai/gpt-4.1-mini"]);
    expect(modelsIn("--model anthropic/claude-sonnet-4-5-20250929 \\")).toEqual(["anthropic/claude-sonnet-4-5-20250929"]);
  });
});
