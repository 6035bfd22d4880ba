/** The filter as a pipeline step: its value is the job's output with the kept items themselves (`items`, in input order). */
import { defineStep } from "../operator-step";
import { filterOperator, type FilterOutput } from "./plan";
import { FilterRequestSchema } from "./schema";
import { filterSpec } from "./submit";

export const filterStep = defineStep({
  operator: filterOperator,
  schema: FilterRequestSchema,
  spec: filterSpec,
  value: (_spec, output, items) => ({ ...(output as FilterOutput), items: (output as FilterOutput).kept.map((index) => items[index]) }),
});
