/**
 * The embed operator (POST /v1/embed): one embedding call per input, in the single stage `items`
 * (../../llm/embeddings.ts); each result carries its `embedding`, the job has no output of its own.
 */
import type { CallSpec, JobSpecBase, Operator } from "../../engine/types";
import { itemResult, oneCallPerItem } from "../single-stage";

export interface EmbedJobSpec extends JobSpecBase {
  type: "embed";
  call: CallSpec;
}

export const embedOperator: Operator<EmbedJobSpec> = {
  v1: false,
  startedFields: { type: "embed" },
  ...oneCallPerItem<EmbedJobSpec>(),
  result: (_spec, task, finish) => {
    const { output, ...rest } = itemResult(task, finish);
    const vector = Array.isArray(output) ? (output as number[]) : null;
    return { ...rest, embedding: vector, dimensions: vector?.length ?? null };
  },
};
