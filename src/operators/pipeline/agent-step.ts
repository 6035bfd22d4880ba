/**
 * A pipeline's `agent` step: one agentic sub-session (per batch element, with `batch`), with the
 * `/v1/agentic-map` fields for one item — `prompt_template` (the agent's first message),
 * `tools`, `max_turns`, `continuation_message`, `completion_marker`, `read_only`,
 * `max_context_tokens`, `max_total_tokens`, `subtasks`, and the call fields `model`, `system_prompt`,
 * `temperature`, `max_tokens`. Per-call `timeout_secs` and `max_retries` are the pipeline's.
 */
import { z } from "@hono/zod-openapi";
import { renderLimits } from "../../config";
import type { AgentSpec } from "../../engine/types";
import { boundedMaxTokens } from "../max-tokens";
import type { FieldIssue } from "../../lib/errors";
import { AgenticMapRequestSchema } from "../../schemas/agentic";
import { ModelSchema } from "../../schemas/common";
import { compileTemplate } from "../../template/jinja";
import { subtaskSettings, toolConfigs, toolIssues } from "../agentic-map/agent-fields";
import type { TaskDefaults } from "../task-call";
import { DEFAULT_MAX_WAIT_SECS } from "../../engine/limits";

export const AgentStepFields = AgenticMapRequestSchema.pick({
  system_prompt: true,
  temperature: true,
  max_tokens: true,
  max_turns: true,
  continuation_message: true,
  completion_marker: true,
  read_only: true,
  tools: true,
  max_context_tokens: true,
  max_total_tokens: true,
  subtasks: true,
}).extend({ prompt_template: z.string().min(1), model: ModelSchema.optional() });

export const AGENT_FIELDS = Object.keys(AgentStepFields.shape);

/** The step's AgentSpec, or its problems (at `path`); template problems throw their own 400s. */
export function agentSpec(
  env: Env,
  defaults: TaskDefaults,
  raw: Record<string, unknown>,
  path: string,
  required: string[],
): { agent: AgentSpec | null; issues: FieldIssue[] } {
  const fields = Object.fromEntries(Object.entries(raw).filter(([k]) => AGENT_FIELDS.includes(k)));
  const parsed = AgentStepFields.safeParse(fields);
  if (!parsed.success) {
    return {
      agent: null,
      issues: parsed.error.issues.map((i) => ({
        path: [path, ...i.path.map((p) => (typeof p === "number" ? `[${p}]` : String(p)))].join(".").replace(/\.\[/g, "["),
        message: i.message,
      })),
    };
  }
  const step = parsed.data;
  const issues = toolIssues(env, step.tools, `${path}.`);
  if (issues.length > 0) return { agent: null, issues };
  compileTemplate(step.prompt_template, `${path}.prompt_template`, required, renderLimits(env), "template_missing_variable");
  const agent: AgentSpec = {
    model: step.model ?? defaults.model,
    promptTemplate: step.prompt_template,
    systemPrompt: step.system_prompt === undefined ? (defaults.system_prompt ?? null) : step.system_prompt,
    temperature: step.temperature ?? null,
    maxTokens: boundedMaxTokens(step.max_tokens === undefined ? defaults.max_tokens : step.max_tokens, defaults),
    timeoutMs: Math.round(defaults.timeout_secs * 1000),
    maxRetries: defaults.max_retries,
    maxWaitMs: (defaults.max_wait_secs ?? DEFAULT_MAX_WAIT_SECS) * 1000,
    maxTurns: step.max_turns,
    continuationMessage: step.continuation_message,
    completionMarker: step.completion_marker ?? null,
    readOnly: step.read_only,
    tools: toolConfigs(step.tools),
    maxContextTokens: step.max_context_tokens ?? null,
    maxTotalTokens: step.max_total_tokens ?? null,
    subtasks: subtaskSettings(step.subtasks),
  };
  return { agent, issues: [] };
}
