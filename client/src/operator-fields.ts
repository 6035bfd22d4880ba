/**
 * The operator-specific fields of filter, classify, rank and resolve as the API names them: the
 * jobs' bodies (./index.ts) and the operator steps of a pipeline (./pipeline.ts) both send them.
 */
import type { ClassifyStep, FilterOptions, FilterStep, RankStep, ResolveStep } from "./types.js";
import { compact } from "./compact.js";

export const cascadeBody = (c: FilterOptions["cascade"]) => (c ? compact({ model: c.model, accept_above: c.acceptAbove, reject_below: c.rejectBelow }) : undefined);

export const filterFields = (o: Pick<FilterStep, "predicateTemplate" | "cascade">): Record<string, unknown> => ({ predicate_template: o.predicateTemplate, cascade: cascadeBody(o.cascade) });

export const classifyFields = (o: Pick<ClassifyStep, "categories" | "multiLabel" | "promptTemplate" | "cascade">): Record<string, unknown> => ({
  categories: o.categories,
  multi_label: o.multiLabel,
  prompt_template: o.promptTemplate,
  cascade: cascadeBody(o.cascade),
});

export const rankFields = (o: Pick<RankStep, "criteria" | "k" | "promptTemplate" | "comparisonTemplate">): Record<string, unknown> => ({ criteria: o.criteria, k: o.k, prompt_template: o.promptTemplate, comparison_template: o.comparisonTemplate });

export const resolveFields = (o: Pick<ResolveStep, "comparisonTemplate" | "blocking" | "resolutionTemplate" | "outputSchema" | "maxComparisons">): Record<string, unknown> => ({
  comparison_template: o.comparisonTemplate,
  blocking: compact({ keys: o.blocking.keys, method: o.blocking.method, threshold: o.blocking.threshold }),
  resolution_template: o.resolutionTemplate,
  output_schema: o.outputSchema,
  max_comparisons: o.maxComparisons,
});
