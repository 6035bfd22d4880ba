/**
 * What a job coordinator keeps in its `meta` table, key by key, with each value's type: the one
 * place that says what the job's stored facts are (the store reads and writes them by these keys
 * only).
 */
import type { Counters } from "../../src/engine/counters";
import type { PacingView } from "../../src/engine/pacing";
import type { JobError, JobStatus } from "../../src/engine/types";
import type { Block } from "../../src/engine/worker-blocks";
import type { JobSpec } from "../../src/operators/registry";

/** Tokens spent against the budget, in all and by stage (./budget.ts). */
export interface Spend {
  total: number; // tokens
  by_stage: Record<string, number>; // tokens
  usd?: number; // dollars (specs stored before v3: absent, 0)
}

/** The webhook's payload of a job's end, stored once (./webhook-sweep.ts). */
export interface CompletedEvent {
  completedAt: string;
  data: unknown;
  round: number; // 1, then one more per recover
}

export interface JobMeta {
  schema_version: number; // coordinator/schema.ts
  spec: JobSpec;
  status: JobStatus;
  round: number; // 1, then one more per recover
  counters: Counters;
  spend: Spend; // tokens spent against the budget, by stage
  output: unknown; // a staged job's final value
  error: JobError | null;
  completed_at: string | null;
  pause_reason: string | null;
  finalized: boolean; // the end's MAP_COMPLETED is emitted and the job left its limiters
  completed_event: CompletedEvent; // the webhook's payload of the end
  webhook_settled: boolean;
  webhook_delivery_id: string; // round 1's, as stored before rounds had their own key
  [round: `webhook_delivery_id:${number}`]: string;
  d1_drop_stages: string[] | null; // stages a recover dropped: their D1 results go with the next flush
  effective: number | null; // adaptive concurrency's cap
  paces: boolean; // the rate pacer paces the job's credential and model
  credential: string; // the credential id of the job's calls
  pacing: PacingView;
  pacing_models: Record<string, { credential: string | null; paces: boolean; view: PacingView }>; // the pacing of the models the job's stages call besides its own (./pacings.ts)
  workers: Block | null; // the block of call workers the job holds this round
  workers_used: (Block | null)[]; // every round's block: a delete wipes what the job left in them
  started_at_ms: number; // when the job began (execution mode auto: its deadline counts from here)
  realtime_stages: string[]; // batch stages execution mode auto moved off batches (its deadline came near)
  flex_stages: string[]; // of those, the ones on the flex tier still (auto's ladder: ../../src/engine/execution.ts)
  cancel_grace_until_ms: number | null; // auto: until when the lines of batches it cancelled wait for their answer
  answered: Record<string, number>; // a job with fallbacks: the items each model of its chain answered
  defects: number; // events the task machine refused that no race explains (./task-runner.ts): each a defect of the engine, logged
  deadline_passed: boolean; // batch: its execution.deadline_secs passed (its open batches were cancelled; items left fail `expired`)
}

export type MetaKey = keyof JobMeta;
