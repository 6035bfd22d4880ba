/** An agent's request fields as the engine keeps them, and their checks: shared by /v1/agentic-map and a pipeline's agent steps. */
import { destinationProblem } from "../../net/destination";
import type { FieldIssue } from "../../lib/errors";
import type { SubtaskSettings, ToolConfig } from "../../engine/types";
import type { AgenticMapRequest } from "../../schemas/agentic";

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
