/**
 * The `fanout` commands of the semantic operators: `filter`, `classify`, `rank` and `resolve`.
 * Each follows its job with a progress line on stderr (like map) and prints the job's output
 * (`{kept, dropped, failed}`, `{counts, failed}`, the top k, `{clusters, resolved, failed}`) on
 * stdout, or into --out; `fanout results JOB_ID` lists every item's answer.
 */
import { readFileSync } from "node:fs";
import type { Fanout } from "./index.js";
import { executionFlag, followStaged, int, jobFlags, need, UsageError, type Flags } from "./cli-staged.js";
import type { Cascade, ClassifyOptions, FilterOptions, RankOptions, ResolveOptions } from "./types.js";

/** `--cascade-model M [--accept-above X] [--reject-below X]`. */
function cascadeFlags(values: Flags): Cascade | undefined {
  if (values["cascade-model"] === undefined) {
    if (values["accept-above"] !== undefined || values["reject-below"] !== undefined)
      throw new UsageError("--accept-above and --reject-below need --cascade-model");
    return undefined;
  }
  return {
    model: need(values["cascade-model"], "--cascade-model"),
    acceptAbove: int(values["accept-above"], "--accept-above"),
    rejectBelow: int(values["reject-below"], "--reject-below"),
  };
}

const shared = (values: Flags) => ({ model: need(values.model, "--model"), ...jobFlags(values), cascade: cascadeFlags(values) });

export function filterOptions(values: Flags, inputs: unknown[]): FilterOptions {
  return { ...shared(values), ...executionFlag(values), inputs, predicateTemplate: need(values.predicate, "--predicate") };
}

/** `--categories a,b,c`, or a .json file of `[{"name", "description"}]`. */
function categories(value: string | boolean | undefined): ClassifyOptions["categories"] {
  const text = need(value, "--categories");
  if (text.endsWith(".json")) return JSON.parse(readFileSync(text, "utf8")) as ClassifyOptions["categories"];
  return text
    .split(",")
    .map((name) => ({ name: name.trim() }))
    .filter((c) => c.name !== "");
}

export function classifyOptions(values: Flags, inputs: unknown[]): ClassifyOptions {
  return {
    ...shared(values),
    ...executionFlag(values),
    inputs,
    categories: categories(values.categories),
    multiLabel: values["multi-label"] === true ? true : undefined,
    promptTemplate: typeof values.template === "string" ? readFileSync(values.template, "utf8") : undefined,
  };
}

export function runFilter(client: Fanout, values: Flags, inputs: unknown[]): Promise<number> {
  return followStaged(client.filter(filterOptions(values, inputs)), values);
}

export function runClassify(client: Fanout, values: Flags, inputs: unknown[]): Promise<number> {
  return followStaged(client.classify(classifyOptions(values, inputs)), values);
}

const text = (path: string | boolean | undefined): string | undefined => (typeof path === "string" ? readFileSync(path, "utf8") : undefined);

export function rankOptions(values: Flags, inputs: unknown[]): RankOptions {
  const k = int(values.k, "--k");
  if (k === undefined) throw new UsageError("--k is required");
  return {
    ...shared(values),
    inputs,
    criteria: need(values.criteria, "--criteria"),
    k,
    promptTemplate: text(values.template),
    comparisonTemplate: text(values["comparison-template"]),
  };
}

export function resolveOptions(values: Flags, inputs: unknown[]): ResolveOptions {
  const method = values["block-method"];
  if (method !== undefined && method !== "exact" && method !== "prefix" && method !== "trigram")
    throw new UsageError("--block-method is exact, prefix or trigram");
  return {
    ...shared(values),
    inputs,
    comparisonTemplate: text(need(values["comparison-template"], "--comparison-template")) as string,
    blocking: {
      keys: need(values["block-keys"], "--block-keys")
        .split(",")
        .map((k) => k.trim()),
      method,
      threshold: int(values.threshold, "--threshold"),
    },
    resolutionTemplate: text(values["resolution-template"]),
    maxComparisons: int(values["max-comparisons"], "--max-comparisons"),
  };
}

export function runRank(client: Fanout, values: Flags, inputs: unknown[]): Promise<number> {
  return followStaged(client.rank(rankOptions(values, inputs)), values);
}

export function runResolve(client: Fanout, values: Flags, inputs: unknown[]): Promise<number> {
  return followStaged(client.resolve(resolveOptions(values, inputs)), values);
}
