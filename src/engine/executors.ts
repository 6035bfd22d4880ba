/**
 * Executors: what the engine knows of each kind of work a stage does (StageWork's `kind`), in one
 * place per kind — so dispatch, budgets, the lost-work sweep and estimates ask the executor, not
 * an `if` on the kind. A new kind (a provider's batch API, an embeddings call) is one entry here,
 * and the object that runs it (today the coordinator's dispatch picks the slot's call worker or
 * the task's session by `session`).
 *
 *   call   one model call per dispatch, by a call worker of the job's slot, which pulls its
 *          slot's next task in its report; paced by the rate pacer (one lease per dispatch)
 *   agent  one sub-session per task (AgentSession), up to max_turns calls per dispatch; the
 *          session leases each turn's call itself (durable-objects/agent/pacing.ts)
 *   batch  one model call per task, sent with the stage's other ready tasks as a line of a
 *          provider batch (durable-objects/coordinator/batch-runner.ts): no slot, no pacing, the
 *          batch polled from the coordinator's alarm; its lines may take the provider's 24 h window
 */
import type { AgentSpec, CallSpec, JobSpecBase, Operator, StageWork } from "./types";
import { sentTimeoutMs } from "./execution";

/** The model-call fields every kind has: what a prompt estimate and an output bound are made of. */
export type CallFields = Pick<CallSpec, "promptTemplate" | "systemPrompt" | "maxTokens" | "model" | "serviceTier" | "embedding">;

export interface Executor<W extends StageWork = StageWork> {
  /** The fields its calls are made with (the first call's, for an agent). */
  call(work: W): CallFields;
  /** The most model calls one dispatch makes (an estimate's and a reservation's multiplier). */
  callsPerDispatch(work: W): number;
  /** The most tokens a dispatch may spend beyond which its own cap stops it (null: none). */
  tokenCap(work: W): number | null;
  /** How long a dispatch may go without a report before the sweep presumes it lost. */
  lostAfterMs(work: W): number;
  /** Whether its dispatch takes one lease of the rate pacer (a single model call, sent at once). */
  paced: boolean;
  /** Whether the task runs in a sub-session of its own (its `session_id`) rather than on the job's slot worker, which pulls its next task. */
  session: boolean;
  /** Whether its answer may come from the response cache (a single call with a known prompt). */
  cacheable: boolean;
  /** What an estimate of jobs with this kind of work says of it. */
  estimateNote: string | null;
  /** How its tasks start: on a slot of the job's concurrency (dispatch), or as lines of a provider batch (the batch runner). */
  lane: "slot" | "batch";
}

const LOST_GRACE_MS = 15_000; // a dispatch with no report after its own time limit + this is presumed lost
const AGENT_TURN_OVERHEAD_MS = 30_000; // per turn of a sub-session: tool calls and storage on top of the model call

const callExecutor: Executor<Extract<StageWork, { kind: "call" }>> = {
  call: (work) => work.call,
  callsPerDispatch: () => 1,
  tokenCap: () => null,
  lostAfterMs: (work) => sentTimeoutMs(work.call) + LOST_GRACE_MS,
  paced: true,
  session: false,
  cacheable: true,
  estimateNote: null,
  lane: "slot",
};

const BATCH_WINDOW_MS = 24 * 3600_000; // the providers' completion window (OpenAI `24h`; Anthropic's batches expire after 24 h)

const batchExecutor: Executor<Extract<StageWork, { kind: "batch" }>> = {
  call: (work) => work.call,
  callsPerDispatch: () => 1,
  tokenCap: () => null,
  lostAfterMs: () => BATCH_WINDOW_MS + 3600_000, // the runner ends every line itself; this only catches a line the provider never answered
  paced: false,
  session: false,
  cacheable: false,
  estimateNote: null,
  lane: "batch",
};

const agentExecutor: Executor<Extract<StageWork, { kind: "agent" }>> = {
  call: (work) => work.agent,
  callsPerDispatch: (work) => work.agent.maxTurns,
  tokenCap: (work) => work.agent.maxTotalTokens,
  lostAfterMs: (work) => agentLostAfterMs(work.agent),
  paced: false,
  session: true,
  cacheable: false,
  estimateNote: "agent items count max_turns calls, each with the first prompt",
  lane: "slot",
};

const agentLostAfterMs = (a: AgentSpec): number => a.maxTurns * (a.timeoutMs * (1 + a.maxRetries) + AGENT_TURN_OVERHEAD_MS) + LOST_GRACE_MS;

const EXECUTORS: { [K in StageWork["kind"]]: Executor<Extract<StageWork, { kind: K }>> } = {
  call: callExecutor,
  batch: batchExecutor,
  agent: agentExecutor,
};

/** The executor of a stage's work. */
export function executorOf<W extends StageWork>(work: W): Executor<W> {
  return EXECUTORS[work.kind] as unknown as Executor<W>;
}

/**
 * Whether a running task is a line of a provider batch: its runner ends it (durable-objects/coordinator/batch-runner.ts), so
 * the lost-work sweep leaves it alone — whatever its stage's work is now (auto may have moved the
 * stage to realtime, whose calls are presumed lost soon after their timeout).
 */
export const isBatchLine = (row: { token: string | null; batch_id: string | null }): boolean => row.batch_id !== null && row.token === `batch:${row.batch_id}`;

/**
 * A stage's work, or null for a stage whose tasks the operator finishes itself (a pipeline's step
 * markers): its operator has no work to give for it, and says so by throwing.
 */
export function workOf<S extends JobSpecBase>(op: Operator<S>, spec: S, stage: string): StageWork | null {
  try {
    return op.work(spec, stage);
  } catch {
    return null;
  }
}
