/**
 * `GET /v1/jobs/{id}/results?stage=steps` of a pipeline: every step, in order, finished or not —
 * `{index, step, status, output, usage}`. Finished steps come from their markers (their value in
 * the shared store); the others from their stages' progress (`pending`, `running` or `failed`,
 * output null, the usage so far). A step's stages are its path, `<path>.input.<name>` and
 * `<path>.inner`.
 */
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

const ownStage = (path: string, stage: string) => stage === path || stage === `${path}.inner` || stage.startsWith(`${path}.input.`);

export function stepList(stages: StageProgress[], markers: StepEntry[]): StepEntry[] {
  const paths = stages.map((s) => s.name).filter((name) => name !== "steps" && !name.endsWith(".inner") && !/\.input\./.test(name));
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
