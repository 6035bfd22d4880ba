/** The reduce operator: an ordered fold with an accumulator (POST /v1/reduce). */
import { defineOperator } from "../define";
import { reduceOperator } from "./plan";
import { ReduceRequestSchema } from "./schema";
import { submitReduceJob } from "./submit";

export const reduceModule = defineOperator({
  type: "reduce",
  route: {
    path: "/reduce",
    operationId: "createReduceJob",
    summary: "An ordered fold: optional inner task per input (run ahead in parallel), then reductions strictly in order",
  },
  schema: ReduceRequestSchema,
  submit: submitReduceJob,
  operator: reduceOperator,
});
