/**
 * The `fanout` commands of the semantic operators: `filter` and `classify`. Each follows its job
 * with a progress line on stderr (like map) and prints the job's output (`{kept, dropped, failed}`
 * or `{counts, failed}`) on stdout, or into --out; `fanout results JOB_ID` lists every item's answer.
 */
import { readFileSync } from "node:fs";
import type { Fanout } from "./index.js";
import { followStaged, int, jobFlags, need, UsageError, type Flags } from "./cli-staged.js";
import type { Cascade, ClassifyOptions, FilterOptions } from "./types.js";

/** `--cascade-model M [--accept-above X] [--reject-below X]`. */
function cascadeFlags(values: Flags): Cascade | undefined {
  if (values["cascade-model"] === undefined) {
    if (values["accept-above"] !== undefined || values["reject-below"] !== undefined) throw new UsageError("--accept-above and --reject-below need --cascade-model");
    return undefined;
  }
  return { model: need(values["cascade-model"], "--cascade-model"), acceptAbove: int(values["accept-above"], "--accept-above"), rejectBelow: int(values["reject-below"], "--reject-below") };
}

const shared = (values: Flags) => ({ model: need(values.model, "--model"), ...jobFlags(values), cascade: cascadeFlags(values) });

export function filterOptions(values: Flags, inputs: unknown[]): FilterOptions {
  return { ...shared(values), inputs, predicateTemplate: need(values.predicate, "--predicate") };
}

/** `--categories a,b,c`, or a .json file of `[{"name", "description"}]`. */
function categories(value: string | boolean | undefined): ClassifyOptions["categories"] {
  const text = need(value, "--categories");
  if (text.endsWith(".json")) return JSON.parse(readFileSync(text, "utf8")) as ClassifyOptions["categories"];
  return text.split(",").map((name) => ({ name: name.trim() })).filter((c) => c.name !== "");
}

export function classifyOptions(values: Flags, inputs: unknown[]): ClassifyOptions {
  return {
    ...shared(values),
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
