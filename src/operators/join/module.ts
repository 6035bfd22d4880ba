/** The join operator: which (left, right) pairs meet a condition (POST /v1/join). */
import { defineOperator } from "../define";
import { joinOperator } from "./plan";
import { JoinRequestSchema } from "./schema";
import { submitJoinJob } from "./submit";

export const joinModule = defineOperator({
  type: "join",
  route: {
    path: "/join",
    operationId: "createJoinJob",
    summary:
      "Join two lists by meaning: the (left, right) pairs that meet a condition, judged one call per pair (blocked by keys, within max_comparisons; a cascade applies) or one call per left item choosing among its candidates",
  },
  schema: JoinRequestSchema,
  submit: submitJoinJob,
  operator: joinOperator,
});
