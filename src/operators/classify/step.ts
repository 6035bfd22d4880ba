/** Classify as a pipeline step: its value is the job's output with each item's answer (`labels`, in input order: a label, a list with `multi_label`, null for an item that failed). */
import { defineStep } from "../operator-step";
import { ITEMS_STAGE } from "../single-stage";
import { classifyOperator } from "./plan";
import { ClassifyRequestSchema } from "./schema";
import { classifySpec } from "./submit";

export const classifyStep = defineStep({
  operator: classifyOperator,
  schema: ClassifyRequestSchema,
  spec: classifySpec,
  value: (spec, output, items, reader) => {
    const labels: unknown[] = items.map(() => null);
    for (const task of reader.done(ITEMS_STAGE)) {
      const answer = task.output as { label?: unknown; labels?: unknown } | null;
      if (task.success && answer) labels[task.index] = (spec.multiLabel ? answer.labels : answer.label) ?? null;
    }
    return { ...(output as Record<string, unknown>), labels };
  },
});
