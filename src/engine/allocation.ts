/** Per-stage token budgets (map-reduce's `token_budget.allocation`), as a pure function. */
import type { StageStatus } from "./types";

/**
 * Each stage's allowance under an allocation: its share of the total, plus what earlier stages
 * that have ended left unspent, passed on to the stages after them in proportion to their
 * shares. A skipped stage's share goes to the others in proportion (it has no stage to run in);
 * a stage without model calls (a shuffle) spends nothing, so its whole share passes on.
 */
export function allowances(
  total: number,
  allocation: Record<string, number>,
  stages: { name: string; status: StageStatus }[],
  spent: Record<string, number>,
): Record<string, number> {
  const live = stages.filter((s) => s.status !== "skipped");
  const liveShare = live.reduce((n, s) => n + (allocation[s.name] ?? 0), 0) || 1;
  const allowance: Record<string, number> = Object.fromEntries(live.map((s) => [s.name, (total * (allocation[s.name] ?? 0)) / liveShare]));
  live.forEach((stage, i) => {
    if (stage.status !== "completed" && stage.status !== "failed") return;
    const later = live.slice(i + 1);
    const laterShare = later.reduce((n, s) => n + (allocation[s.name] ?? 0), 0);
    const unspent = Math.max(0, (allowance[stage.name] ?? 0) - (spent[stage.name] ?? 0));
    if (laterShare <= 0) return;
    for (const s of later) allowance[s.name] = (allowance[s.name] ?? 0) + (unspent * (allocation[s.name] ?? 0)) / laterShare;
    allowance[stage.name] = spent[stage.name] ?? 0;
  });
  return allowance;
}
