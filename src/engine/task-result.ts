/** The fields every staged operator's task result has (the contract's), before its own. */
import type { TaskFinish } from "./types";

export function taskResultBase(task: { stage: string; index: number }, finish: TaskFinish) {
  return {
    stage: task.stage,
    index: task.index,
    success: finish.success,
    output: finish.success ? finish.output : null,
    error: finish.error,
    error_kind: finish.errorKind,
    attempts: finish.attempts,
    usage: finish.usage,
    cost_usd: finish.costUsd,
  };
}
