/** Request schema of POST /v1/reduce, built from the shared base fields. */
import { z } from "@hono/zod-openapi";
import { baseJobFields, callOverrideFields } from "../base-fields";

export const MAX_REDUCE_INPUTS = 10_000;

const TaskSchema = (description: string) => z.strictObject({ prompt_template: z.string().min(1), ...callOverrideFields }).openapi({ description });

export const ReduceRequestSchema = z
  .strictObject({
    inputs: z
      .union([z.array(z.unknown()), z.record(z.string(), z.unknown())])
      .refine((v) => {
        const n = Array.isArray(v) ? v.length : Object.keys(v).length;
        return n >= 1 && n <= MAX_REDUCE_INPUTS;
      }, `inputs must hold 1–${MAX_REDUCE_INPUTS} entries`)
      .openapi({ description: "A list, or named inputs (an object, taken in key order)" }),
    initial_value: z.unknown().optional().openapi({ description: "The accumulator before the first reduction (default null)" }),
    inner_task: TaskSchema("Runs per input, ahead of the fold; its template must use `item` (also sees `name`, `index`)").nullish(),
    reduction_task: TaskSchema(
      "Folds one input into the accumulator; its template must use `accumulator` and `current_result` (also sees `original_input`, `name`, `index`)",
    ),
    ...baseJobFields,
  })
  .openapi("ReduceRequest");

export type ReduceRequest = z.infer<typeof ReduceRequestSchema>;
