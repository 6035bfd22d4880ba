/**
 * What a running job is expected to have spent when it ends (contract v4, "Estimates and names":
 * outputs sized from the stage's finished calls once there are some): each stage's spend so far,
 * plus its tasks left at the mean of its finished tasks. Null until every stage with tasks left
 * has finished one (nothing to size it from); a stage not sized yet (a later reduce level) is not
 * counted, so the figure can grow when it is.
 */
export interface StageSpend {
  status: string;
  total: number;
  completed: number;
  usage: { input_tokens: number; output_tokens: number };
  cost_usd: number | null;
}

export interface Expected {
  input_tokens: number;
  output_tokens: number;
  /** Null when a call used a model with no price. */
  cost_usd: number | null;
}

export function expectedOf(stages: StageSpend[]): Expected | null {
  let input = 0;
  let output = 0;
  let cost: number | null = 0;
  for (const s of stages) {
    const left = s.status === "skipped" ? 0 : Math.max(0, s.total - s.completed);
    if (left > 0 && s.completed === 0) return null;
    const scale = left > 0 ? 1 + left / s.completed : 1;
    input += s.usage.input_tokens * scale;
    output += s.usage.output_tokens * scale;
    cost = cost === null || s.cost_usd === null ? null : cost + s.cost_usd * scale;
  }
  return { input_tokens: Math.round(input), output_tokens: Math.round(output), cost_usd: cost === null ? null : Math.round(cost * 1e8) / 1e8 };
}
