/** POST /v1/agentic-map submissions: the agentic operator's own checks and spec, then the shared submission. */
import { renderLimits } from "../../config";
import { ApiError } from "../../lib/errors";
import { compileTemplate } from "../../template/jinja";
import { checkFieldCaps } from "../../jobs/field-caps";
import { baseSpec, submitJob, type SubmitAnswer } from "../../jobs/submit";
import { boundedMaxTokens } from "../max-tokens";
import { subtaskSettings, toolConfigs, toolIssues } from "./agent-fields";
import type { AgenticMapRequest } from "../../schemas/agentic";
import { newId } from "../../lib/ids";
import { agenticMapOperator, type AgentJobSpec } from "./plan";

function checkTools(env: Env, tools: AgenticMapRequest["tools"]): void {
  const issues = toolIssues(env, tools);
  if (issues.length > 0) throw new ApiError(400, "invalid_request", "The tools are not usable (see details).", { details: issues });
}

export async function submitAgenticJob(
  env: Env,
  tenantId: string,
  body: AgenticMapRequest,
  idempotencyKey: string | null,
  dryRun = false,
): Promise<SubmitAnswer> {
  checkFieldCaps(body); // before any parsing: a 20 MB template costs nothing to refuse
  compileTemplate(body.agent_prompt_template, "agent_prompt_template", "item", renderLimits(env));
  checkTools(env, body.tools);
  const tools = toolConfigs(body.tools);
  const spec: AgentJobSpec = {
    ...baseSpec(newId("job"), tenantId, body),
    type: "agentic_map",
    agent: {
      model: body.model,
      promptTemplate: body.agent_prompt_template,
      systemPrompt: body.system_prompt ?? null,
      temperature: body.temperature ?? null,
      maxTokens: boundedMaxTokens(body.max_tokens, body),
      timeoutMs: Math.round(body.timeout_secs * 1000),
      maxRetries: body.max_retries,
      maxWaitMs: body.max_wait_secs * 1000,
      maxTurns: body.max_turns,
      continuationMessage: body.continuation_message,
      completionMarker: body.completion_marker ?? null,
      readOnly: body.read_only,
      tools,
      maxContextTokens: body.max_context_tokens ?? null,
      maxTotalTokens: body.max_total_tokens ?? null,
      subtasks: subtaskSettings(body.subtasks),
    },
  };
  return submitJob(env, tenantId, { spec, operator: agenticMapOperator, body, inputs: body.inputs, values: body.inputs }, idempotencyKey, dryRun);
}
