/** POST /v1/agentic-map submissions: the agentic operator's own checks and spec, then the shared submission. */
import { renderLimits } from "../../config";
import { ApiError, type FieldIssue } from "../../lib/errors";
import { compileTemplate } from "../../template/jinja";
import { destinationProblem } from "../../net/destination";
import { checkFieldCaps } from "../../jobs/field-caps";
import type { SubtaskSettings, ToolConfig } from "../../engine/types";
import { baseSpec, boundedMaxTokens, submitJob, type SubmitAnswer } from "../../jobs/submit";
import type { AgenticMapRequest } from "../../schemas/agentic";
import { newId } from "../../lib/ids";
import type { AgentJobSpec } from "./plan";

/** Problems with an agent's tools (destinations, duplicate names), each at `<prefix>tools[i]…`. */
export function toolIssues(env: Env, tools: AgenticMapRequest["tools"], prefix = ""): FieldIssue[] {
  const seen = new Map<string, number>();
  const issues: FieldIssue[] = [];
  tools.forEach((tool, i) => {
    const urlProblem = destinationProblem(env, tool.url);
    if (urlProblem) issues.push({ path: `${prefix}tools[${i}].url`, message: urlProblem });
    if (tool.type !== "http") return;
    const first = seen.get(tool.name);
    if (first !== undefined) issues.push({ path: `${prefix}tools[${i}].name`, message: `"${tool.name}" is also the name of tools[${first}]` });
    else seen.set(tool.name, i);
  });
  return issues;
}

function checkTools(env: Env, tools: AgenticMapRequest["tools"]): void {
  const issues = toolIssues(env, tools);
  if (issues.length > 0) throw new ApiError(400, "invalid_request", "The tools are not usable (see details).", { details: issues });
}

/** `subtasks` as the engine keeps them (null when off). */
export const subtaskSettings = (s: AgenticMapRequest["subtasks"]): SubtaskSettings | null =>
  s?.enabled ? { maxDepth: s.max_depth, maxTotalTokens: s.max_total_tokens ?? null, timeoutMs: s.timeout_secs * 1000 } : null;

/** The tools as the engine keeps them. */
export const toolConfigs = (tools: AgenticMapRequest["tools"]): ToolConfig[] =>
  tools.map((t) =>
    t.type === "http"
      ? { type: "http", name: t.name, description: t.description, input_schema: t.input_schema, url: t.url, read_only: t.read_only }
      : { type: "mcp", url: t.url, allowed_tools: t.allowed_tools ?? null },
  );

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
  return submitJob(env, tenantId, { spec, body, inputs: body.inputs, values: body.inputs }, idempotencyKey, dryRun);
}
