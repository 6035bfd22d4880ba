/** The agentic-map operator: one multi-turn, tool-using sub-session per input (POST /v1/agentic-map). */
import { AgenticMapRequestSchema } from "../../schemas/agentic";
import { defineOperator } from "../define";
import { agenticMapOperator } from "./plan";
import { submitAgenticJob } from "./submit";

export const agenticMapModule = defineOperator({
  type: "agentic_map",
  route: {
    path: "/agentic-map",
    operationId: "createAgenticMapJob",
    summary: "Run a multi-turn, tool-using agent per input, each in its own durable sub-session",
  },
  schema: AgenticMapRequestSchema,
  submit: submitAgenticJob,
  operator: agenticMapOperator,
});
