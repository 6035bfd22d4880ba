/**
 * The agentic-map operator's plan: one sub-session per input, in the single stage `items` (the
 * session id is fixed when the plan is stored, so a re-dispatch resumes the same session). The session reports its own result
 * fields as `details`; a session lost as often as retries allow gets a result built here.
 */
import { newId } from "../../lib/ids";
import type { AgentSpec, JobSpecBase, Operator, TaskResult } from "../../engine/types";
import { completeWhenAllDone, ITEMS_STAGE, itemsPlan } from "../single-stage";

export interface AgentJobSpec extends JobSpecBase {
  type: "agentic_map";
  agent: AgentSpec;
}

export const agenticMapOperator: Operator<AgentJobSpec> = {
  v1: true,
  callWorkers: false, // every item is a session's (AgentSession), never a call worker's
  startedFields: { type: "agentic" }, // as v1 sends it
  mainStage: () => ITEMS_STAGE,
  plan: (_spec, inputs) => itemsPlan(inputs, () => newId("ses")),
  advance: (_spec, reader) => completeWhenAllDone(reader),
  work: (spec) => ({ kind: "agent", tenantId: spec.tenantId, agent: spec.agent }),
  vars: (_spec, task) => ({ item: task.input }),
  result: (_spec, task, finish): TaskResult => ({
    index: task.index,
    input: task.input,
    // A session that never reported (lost) has no details of its own.
    session_id: finish.sessionId,
    output_text: "",
    stop_reason: "error",
    turns: 0,
    token_usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0 },
    intermediate_outputs: [],
    ...finish.details,
    success: finish.success,
    error: finish.error,
    error_kind: finish.errorKind,
    cost_usd: finish.costUsd,
  }),
};
