/** The rank operator: the top k items by criteria, scored in parallel, ties at the cut compared pairwise (POST /v1/rank). */
import { defineOperator } from "../define";
import { rankOperator } from "./plan";
import { RankRequestSchema } from "./schema";
import { submitRankJob } from "./submit";

export const rankModule = defineOperator({
  type: "rank",
  route: {
    path: "/rank",
    operationId: "createRankJob",
    summary:
      "The top k items by your criteria: every item scored in parallel, ties at the cut broken by pairwise comparisons; the job's output is `[{index, score}]` in order",
  },
  schema: RankRequestSchema,
  submit: submitRankJob,
  operator: rankOperator,
});
