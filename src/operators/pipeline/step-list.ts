/**
 * `GET /v1/jobs/{id}/results?stage=steps` of a pipeline: every step, in order, finished or not —
 * `{index, step, status, output, usage}`. Finished steps come from their markers (their value in
 * the shared store); the others from their stages' progress (`pending`, `running` or `failed`,
 * output null, the usage so far). A step's stages are its path, `<path>.input.<name>` and
 * `<path>.inner` (and its agents' children, `<path>.subtasks`).
 *
 * Which stages are steps is read from the names with the plan's own rule, not by suffix: a stage
 * is a step's part only when the name before the part's suffix is a stage too (a leaf step's:
 * ids are unique, so no other step has that path). `outer.inner`, a step `inner` inside the
 * sequential step `outer` (which has no stage), is a step. An operator step (filter, classify,
 * rank, resolve) has no stage of its own: its operator's stages are `<path>/<stage>`.
 */
import { SUB_SEPARATOR } from "./stage-names";

interface StageProgress {
  name: string;
  status: string;
  usage: { input_tokens: number; output_tokens: number };
}

export interface StepEntry {
  index: number;
  success: boolean;
  step: string;
  status: "pending" | "running" | "completed" | "failed";
  output: unknown;
  usage: { input_tokens: number; output_tokens: number };
}

/** Whether `name` is a part of a leaf step's (its input task's, its inner tasks', its agents' children's) and not a step. */
function isPart(name: string, stages: Set<string>): boolean {
  for (const suffix of [".inner", ".subtasks"]) if (name.endsWith(suffix) && stages.has(name.slice(0, -suffix.length))) return true;
  for (let at = name.indexOf(".input."); at > 0; at = name.indexOf(".input.", at + 1)) if (stages.has(name.slice(0, at))) return true;
  return false;
}

const ownStage = (path: string, stage: string) => stage === path || stage.startsWith(`${path}${SUB_SEPARATOR}`) || stage === `${path}.inner` || stage === `${path}.subtasks` || stage.startsWith(`${path}.input.`);

/** The step a stage is of: an operator step's stages are `<path>/<stage>` (a `/` is in no id). */
const stepOf = (name: string): string => name.split(SUB_SEPARATOR)[0] as string;

export function stepList(stages: StageProgress[], markers: StepEntry[]): StepEntry[] {
  const names = new Set(stages.map((s) => s.name));
  const paths = [...new Set(stages.map((s) => s.name).filter((name) => name !== "steps" && !isPart(name, names)).map(stepOf))];
  const finished = new Map(markers.map((m) => [m.index, m]));
  return paths.map((path, index) => {
    const marker = finished.get(index);
    if (marker) return marker;
    const own = stages.filter((s) => ownStage(path, s.name));
    const status: StepEntry["status"] = own.some((s) => s.status === "failed") ? "failed" : own.some((s) => s.status === "running" || s.status === "completed") ? "running" : "pending";
    const usage = own.reduce((u, s) => ({ input_tokens: u.input_tokens + s.usage.input_tokens, output_tokens: u.output_tokens + s.usage.output_tokens }), { input_tokens: 0, output_tokens: 0 });
    return { index, success: false, step: path, status, output: null, usage };
  });
}
