/** The map operator: one model call per input (POST /v1/map). */
import { MapRequestSchema } from "../../schemas/map";
import { defineOperator } from "../define";
import { mapOperator } from "./plan";
import { submitMapJob } from "./submit";

export const mapModule = defineOperator({
  type: "map",
  route: { path: "/map", operationId: "createMapJob", summary: "Run a prompt over every input: one model call per item, validated against output_schema" },
  schema: MapRequestSchema,
  submit: submitMapJob,
  operator: mapOperator,
});
