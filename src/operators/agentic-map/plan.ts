/**
 * The agentic-map operator's plan: one stage, `items`, one sub-session per input (its id fixed at
 * submission, so a re-dispatch resumes the same session). The session reports its own result
 * fields as `details`; a session lost as often as retries allow gets a result built here.
 */
import { newId } from "../../lib/ids";
import type { AgentSpec, JobSpecBase, Operator, TaskResult } from "../../engine/types";
import { ITEMS_STAGE } from "../map/plan";

export interface AgentJobSpec extends JobSpecBase {
  type: "agentic_map";
  agent: AgentSpec;
}

export const agenticMapOperator: Operator<AgentJobSpec> = {
  v1: true,
  mainStage: () => ITEMS_STAGE,
  plan: (_spec, inputs) => ({
    stages: [{ name: ITEMS_STAGE, total: inputs.length }],
    tasks: inputs.map((input, index) => ({ stage: ITEMS_STAGE, index, input, sessionId: newId("ses") })),
  }),
  advance: (_spec, reader) => (reader.open() === 0 ? { ready: [], end: { status: "completed", output: null, error: null } } : { ready: [] }),
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
  }),
};
