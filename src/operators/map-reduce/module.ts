/** The map-reduce operator: the corpus orchestrator (POST /v1/map-reduce). */
import { defineOperator } from "../define";
import { mapReduceOperator } from "./plan";
import { MapReduceRequestSchema } from "./schema";
import { submitMapReduceJob } from "./submit";
import { buildAudit } from "./audit";

export const mapReduceModule = defineOperator({
  type: "map_reduce",
  route: {
    path: "/map-reduce",
    operationId: "createMapReduceJob",
    summary: "The corpus orchestrator: batched mappers, a deterministic shuffle, hierarchical/flat/category reduce, synthesis",
  },
  schema: MapReduceRequestSchema,
  submit: submitMapReduceJob,
  operator: mapReduceOperator,
  views: { audit: buildAudit },
});
