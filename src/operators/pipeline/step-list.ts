/**
 * `GET /v1/jobs/{id}/results?stage=steps` of a pipeline: every step, in order, finished or not —
 * `{index, step, status, output, usage}`. Finished steps come from their markers (their value in
 * the shared store); the others from their stages' progress (`pending`, `running` or `failed`,
 * output null, the usage so far).
 *
 * A stage's step is a fact of the stage (`step`, set by the plan: its own stage, its input tasks',
 * its inner tasks', an operator step's stages, its agents' children), never read from its name.
 * Jobs stored before stages carried it are read with the plan's naming rule (`legacySteps`).
 */
import { SUB_SEPARATOR } from "./stage-names";

interface StageProgress {
  name: string;
  status: string;
  usage: { input_tokens: number; output_tokens: number };
  step?: string;
}

export interface StepEntry {
  index: number;
  success: boolean;
  step: string;
  status: "pending" | "running" | "completed" | "failed";
  output: unknown;
  usage: { input_tokens: number; output_tokens: number };
}

export function stepList(stages: StageProgress[], markers: StepEntry[]): StepEntry[] {
  const grouped = stages.some((s) => s.step !== undefined) ? stages.filter((s) => s.step !== undefined) : legacySteps(stages);
  const paths = [...new Set(grouped.map((s) => s.step as string))];
  const finished = new Map(markers.map((m) => [m.index, m]));
  return paths.map((path, index) => {
    const marker = finished.get(index);
    if (marker) return marker;
    const own = grouped.filter((s) => s.step === path);
    const status: StepEntry["status"] = own.some((s) => s.status === "failed")
      ? "failed"
      : own.some((s) => s.status === "running" || s.status === "completed")
        ? "running"
        : "pending";
    const usage = own.reduce((u, s) => ({ input_tokens: u.input_tokens + s.usage.input_tokens, output_tokens: u.output_tokens + s.usage.output_tokens }), {
      input_tokens: 0,
      output_tokens: 0,
    });
    return { index, success: false, step: path, status, output: null, usage };
  });
}

/**
 * A job stored before stages carried their step: each stage's step read with the plan's naming
 * rule — a stage is a leaf step's part (`<path>.input.<name>`, `<path>.inner`, `<path>.subtasks`)
 * only when the name before the part is a stage too (ids are unique, so no other step has that
 * path); an operator step's stages are `<path>/<stage>`; the pipeline's own `steps` is none.
 */
function legacySteps(stages: StageProgress[]): (StageProgress & { step: string })[] {
  const names = new Set(stages.map((s) => s.name));
  const partOf = (name: string): string | null => {
    for (const suffix of [".inner", ".subtasks"]) if (name.endsWith(suffix) && names.has(name.slice(0, -suffix.length))) return name.slice(0, -suffix.length);
    for (let at = name.indexOf(".input."); at > 0; at = name.indexOf(".input.", at + 1)) if (names.has(name.slice(0, at))) return name.slice(0, at);
    return null;
  };
  return stages.filter((s) => s.name !== "steps").map((s) => ({ ...s, step: partOf(s.name) ?? (s.name.split(SUB_SEPARATOR)[0] as string) }));
}
