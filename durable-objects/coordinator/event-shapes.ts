/**
 * What a job's events look like, chosen once by its operator: v1's (map, agentic-map: one
 * MAP_ITEM_COMPLETED per item with the running count, no stage events, no output on the end) or
 * the staged jobs' (TASK_COMPLETED per task, STAGE_STARTED and STAGE_COMPLETED, the planned
 * stages on the start, the output and error on the end). The run emits through its job log, which
 * asks the shape; nothing in the run tests which version a job is.
 */
import type { StageRow } from "./store";

export interface TaskEvent {
  jobId: string;
  stage: string;
  index: number;
  success: boolean;
  completed: number; // the job's finished items after this one
  total: number;
}

export interface EventShape {
  /** What MAP_STARTED adds for the planned stages. */
  startedFields(planned: { name: string; total: number }[]): Record<string, unknown>;
  /** The event of a finished task, and its fields before `result`. */
  taskEvent(
    t: TaskEvent,
  ):
    | { name: "MAP_ITEM_COMPLETED"; fields: { job_id: string; completed: number; total: number; success: boolean } }
    | { name: "TASK_COMPLETED"; fields: { job_id: string; stage: string; index: number; success: boolean } };
  /** Whether stages have events of their own (STAGE_STARTED, STAGE_COMPLETED). */
  readonly stageEvents: boolean;
  /** Whether the job's value (`output`, `error`) is on its end event and its progress. */
  readonly showsOutput: boolean;
}

const V1: EventShape = {
  startedFields: () => ({}),
  taskEvent: (t) => ({ name: "MAP_ITEM_COMPLETED", fields: { job_id: t.jobId, completed: t.completed, total: t.total, success: t.success } }),
  stageEvents: false,
  showsOutput: false,
};

const STAGED: EventShape = {
  startedFields: (planned) => ({ stages: planned }),
  taskEvent: (t) => ({ name: "TASK_COMPLETED", fields: { job_id: t.jobId, stage: t.stage, index: t.index, success: t.success } }),
  stageEvents: true,
  showsOutput: true,
};

export const eventShape = (operator: { v1: boolean }): EventShape => (operator.v1 ? V1 : STAGED);

/** STAGE_COMPLETED's data. */
export const stageCompleted = (jobId: string, stage: StageRow) => ({
  job_id: jobId,
  stage: stage.name,
  succeeded: stage.succeeded,
  failed: stage.failed,
  usage: { input_tokens: stage.input_tokens, output_tokens: stage.output_tokens },
});
