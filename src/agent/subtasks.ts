/**
 * The `spawn_subtask` tool of an agent with `subtasks` (v2 contract, "Agent subtasks"): its
 * offer (a plain tool spec, so both providers' formats carry it), the check of its arguments, the
 * refusals the model reads as tool errors (depth, cycle, chain tokens, chain time), and the
 * child's first message.
 *
 * A child's context (`context_management`, defaults per the reference spec for subtasks:
 * inherit `subset`, accumulate false, `notes_only`): `none` — the description only; `subset` —
 * the description and the inputs as JSON; `full` — those and the parent's conversation so far
 * (each message cut to NOTE_CHARS with `notes_only`). `accumulate_data` adds the parent's
 * earlier subtasks' answers.
 */
import type { SubtaskSettings } from "../engine/types";
import type { ChatMessage, ToolSpec } from "../llm/types";
import { isRecord as isObject } from "../lib/records";

export const SPAWN_TOOL = "spawn_subtask";
export const MAX_DESCRIPTION_CHARS = 10_000;
export const MAX_INPUTS_BYTES = 64_000;
export const NOTE_CHARS = 1_000;
const TRANSCRIPT_MAX_CHARS = 64_000;

export const spawnToolSpec: ToolSpec = {
  name: SPAWN_TOOL,
  description:
    "Delegate a self-contained subtask to a helper agent with the same tools. It works on its own and its final answer comes back as this tool's result. Give a precise description and the inputs it needs.",
  input_schema: {
    type: "object",
    properties: {
      description: { type: "string", description: "What the subtask must do and answer" },
      inputs: { type: "object", description: "Named values the subtask needs" },
      context_management: {
        type: "object",
        properties: {
          inherit_context: { type: "string", enum: ["full", "none", "subset"] },
          accumulate_data: { type: "boolean" },
          accumulation_format: { type: "string", enum: ["notes_only", "full_output"] },
        },
      },
    },
    required: ["description"],
  },
};

export interface SpawnRequest {
  description: string;
  inputs: Record<string, unknown>;
  inherit: "full" | "none" | "subset";
  accumulate: boolean;
  format: "notes_only" | "full_output";
}

/** The tool call's arguments, or what is wrong with them (a tool error for the model). */
export function readSpawn(argumentsText: string): { ok: true; request: SpawnRequest } | { ok: false; message: string } {
  let args: unknown;
  try {
    args = JSON.parse(argumentsText || "{}");
  } catch {
    return { ok: false, message: "spawn_subtask: the arguments are not JSON" };
  }
  if (!isObject(args)) return { ok: false, message: "spawn_subtask: the arguments must be an object" };
  const { description, inputs = {}, context_management: cm = {} } = args;
  if (typeof description !== "string" || description.trim() === "") return { ok: false, message: "spawn_subtask: description must be a non-empty string" };
  if (description.length > MAX_DESCRIPTION_CHARS) return { ok: false, message: `spawn_subtask: description is at most ${MAX_DESCRIPTION_CHARS} characters` };
  if (!isObject(inputs)) return { ok: false, message: "spawn_subtask: inputs must be an object of named values" };
  if (new TextEncoder().encode(JSON.stringify(inputs)).length > MAX_INPUTS_BYTES)
    return { ok: false, message: `spawn_subtask: inputs are at most ${MAX_INPUTS_BYTES} bytes` };
  if (!isObject(cm)) return { ok: false, message: "spawn_subtask: context_management must be an object" };
  const inherit = cm.inherit_context ?? "subset";
  const accumulate = cm.accumulate_data ?? false;
  const format = cm.accumulation_format ?? "notes_only";
  if (inherit !== "full" && inherit !== "none" && inherit !== "subset")
    return { ok: false, message: "spawn_subtask: inherit_context must be full, none or subset" };
  if (typeof accumulate !== "boolean") return { ok: false, message: "spawn_subtask: accumulate_data must be true or false" };
  if (format !== "notes_only" && format !== "full_output")
    return { ok: false, message: "spawn_subtask: accumulation_format must be notes_only or full_output" };
  return { ok: true, request: { description, inputs, inherit, accumulate, format } };
}

/** JSON with sorted keys: equal values, equal text. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (isObject(value))
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`)
      .join(",")}}`;
  return JSON.stringify(value) ?? "null";
}

/** What makes two spawns "identical": their description and inputs. */
export async function spawnFingerprint(request: SpawnRequest): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(canonical([request.description.trim(), request.inputs])));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export interface ChainPosition {
  depth: number; // this session's
  ancestors: string[]; // the fingerprints of the spawns that led here
  deadline: number;
  chainTokens: number; // the chain's tokens as this session knows them: above it, its own, its children's
}

/** Why this spawn is refused (a tool error the model can read), or null. */
export function spawnRefusal(settings: SubtaskSettings, at: ChainPosition, fingerprint: string, now: number): string | null {
  if (at.depth + 1 > settings.maxDepth)
    return `spawn_subtask refused: subtasks nest at most ${settings.maxDepth} levels deep, and this one would be level ${at.depth + 1}. Do the work here instead.`;
  if (at.ancestors.includes(fingerprint))
    return "spawn_subtask refused: the same description and inputs as a subtask above this one (a cycle). Do the work here, or change the request.";
  if (now >= at.deadline)
    return `spawn_subtask refused: the subtask chain's time limit (${Math.round(settings.timeoutMs / 1000)} s) has passed. Answer with what you have.`;
  if (settings.maxTotalTokens !== null && at.chainTokens >= settings.maxTotalTokens) {
    return `spawn_subtask refused: the subtask chain has used ${at.chainTokens} tokens of its ${settings.maxTotalTokens}. Answer with what you have.`;
  }
  return null;
}

const clip = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max)}…`);

/** The child's first message: the description, then what its context management lets it see. */
export function childPrompt(request: SpawnRequest, parentHistory: ChatMessage[], earlierAnswers: string[]): string {
  const parts = [request.description.trim()];
  if (request.inherit !== "none" && Object.keys(request.inputs).length > 0) parts.push(`Inputs:\n${JSON.stringify(request.inputs, null, 2)}`);
  if (request.inherit === "full") {
    const cut = request.format === "notes_only" ? NOTE_CHARS : TRANSCRIPT_MAX_CHARS;
    const lines = parentHistory.map((m) => `${m.role}: ${clip(m.content, cut)}`);
    parts.push(`The conversation of the agent that asked for this subtask:\n${clip(lines.join("\n"), TRANSCRIPT_MAX_CHARS)}`);
  }
  if (request.accumulate && earlierAnswers.length > 0) {
    const cut = request.format === "notes_only" ? NOTE_CHARS : TRANSCRIPT_MAX_CHARS;
    parts.push(`Answers of earlier subtasks:\n${earlierAnswers.map((a, i) => `${i + 1}. ${clip(a, cut)}`).join("\n")}`);
  }
  return parts.join("\n\n");
}
