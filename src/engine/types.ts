/**
 * The stage engine's vocabulary. A job is a plan of **stages**, each a set of **tasks** keyed by
 * (stage, index). An operator (src/operators/<name>/) compiles a request into a JobSpec and says,
 * through pure functions over what has finished so far, which tasks become ready next and when
 * the job ends. The coordinator knows no operator: it stores tasks, dispatches ready ones under
 * the concurrency cap, applies the retry policy, and asks the operator what follows.
 */
import type { ScoredField } from "../llm/logprobs";
import type { TraceIds } from "./tracing";
import type { RateLimit } from "./pacing";
import type { EndpointData } from "../llm/types";
import type { UsageSums, usageOut } from "./counters";

/** Why a task failed (the API's `error_kind`): the one list, which the schemas' enum is made from. */
export const ERROR_KINDS = ["timeout", "validation", "llm_error", "schema_error", "internal", "tool_error", "rate_limited", "expired", "unavailable"] as const;
export type ErrorKind = (typeof ERROR_KINDS)[number];

export type JobStatus = "queued" | "running" | "paused" | "completed" | "cancelled" | "failed";
export type StageStatus = "pending" | "running" | "completed" | "failed" | "skipped";

export const isTerminal = (status: string): boolean => status === "completed" || status === "cancelled" || status === "failed";

/** One model call per attempt: what a task of a call stage runs. */
export interface CallSpec {
  model: string;
  systemPrompt: string | null;
  promptTemplate: string;
  templateField: string; // the request field the template came from, for error details
  outputSchema: Record<string, unknown> | null;
  temperature: number | null;
  maxTokens: number | null;
  timeoutMs: number;
  retryGuidance: string;
  maxOutputBytes: number;
  /** `extractions`: the output must be a list of objects, or an object whose `extractions` is one (map-reduce mappers). */
  shape?: "extractions";
  /** The job's response cache: answers of identical calls within this many seconds are reused. */
  cacheTtlSecs?: number | null;
  /** false: the request's `prompt_cache: false` (absent: mark the shared prefix for the provider's prompt cache). */
  promptCache?: boolean;
  /** A cascade's cheaper call scored by token log-probabilities: the answer's `keep` or `label` value (its `confidence` replaced where the provider gives them). */
  logprobScore?: ScoredField;
  /** An embedding call (POST /v1/embed: ../llm/embeddings.ts): its answer is the vector as JSON, no tokens written. */
  embedding?: { dimensions: number | null; packed?: true }; // packed: its output kept as ../lib/packed-vector.ts's text (embedding blocking)
  /** The call's own fallback chain after its model (a pipeline step's or a map-reduce task's `fallbacks`: ./fallbacks.ts); absent: the job's, on the job's model. */
  fallbacks?: string[];
  /** `flex`: OpenAI's flex tier (execution mode flex, or auto's second rung): the batch price, a long timeout, busy answers as back-pressure (./execution.ts). */
  serviceTier?: "flex";
}

export type ToolConfig =
  | { type: "http"; name: string; description: string; input_schema: Record<string, unknown>; url: string; read_only: boolean }
  | { type: "mcp"; url: string; allowed_tools: string[] | null };

/** One multi-turn sub-session per task: what a task of an agent stage runs. */
export interface AgentSpec {
  model: string;
  promptTemplate: string;
  systemPrompt: string | null;
  temperature: number | null;
  maxTokens: number | null;
  timeoutMs: number; // per model call
  maxRetries: number; // per model call, for transient errors and timeouts
  /** How long one call may wait on rate limits before the item fails `rate_limited` (specs stored before it: the default). */
  maxWaitMs?: number;
  maxTurns: number;
  continuationMessage: string;
  completionMarker: string | null;
  readOnly: boolean;
  tools: ToolConfig[];
  maxContextTokens: number | null;
  maxTotalTokens: number | null;
  subtasks?: SubtaskSettings | null; // the spawn_subtask tool (absent in specs stored before subtasks)
}

/** `subtasks` of an agent: children it may spawn, bounded in depth, tokens and time. */
export interface SubtaskSettings {
  maxDepth: number;
  maxTotalTokens: number | null; // the whole chain's tokens
  timeoutMs: number; // the whole chain's time, from the root session's first turn
}

/**
 * A child sub-session an agent asked for (the spawn_subtask tool): what the coordinator stores
 * with the child's task and hands to the child's session with its claim.
 */
export interface SubtaskSpawn {
  sessionId: string; // the child's, chosen by the parent (the same on a repeated report)
  parentSessionId: string;
  prompt: string; // the child's first message
  depth: number; // the child's: the root item is 0
  ancestors: string[]; // fingerprints (description + inputs) of the spawns above the child, its own last
  deadline: number; // epoch ms: the chain's time limit
  inheritedTokens: number; // the chain's tokens above the child when it was spawned
}

/**
 * What a stage is, kept in its row (a name is for people only): `work`, a stage of the plan;
 * `children`, where an agent's subtasks run — one per stage of the plan whose agents spawn
 * (named `<stage>.subtasks`), grandchildren included, with that stage as its `parent`.
 */
export type StageKind = "work" | "children";
export const SUBTASKS_SUFFIX = ".subtasks";

/** What the workers of one stage need, fetched once per worker from the coordinator. */
export type StageWork =
  | { kind: "call"; tenantId: string; call: CallSpec; oneModel?: true } // oneModel: its answers must be its model's (a cascade's oracle sample): no fallbacks
  | { kind: "batch"; tenantId: string; call: CallSpec } // the same calls through the provider's batch API (./executors.ts)
  | { kind: "agent"; tenantId: string; agent: AgentSpec };

/** Contract v3 `execution`: how a job's stages of independent calls run (a fold's reductions and agents always run realtime). */
export interface ExecutionSpec {
  mode: "realtime" | "batch" | "auto" | "flex";
  /** `auto`: the time from the job's start by which every item should have a result; the stragglers run realtime before it. */
  deadlineSecs: number;
}

export interface BudgetSpec {
  /** Tokens (input + output); null: only a dollar limit. */
  total: number | null;
  /** Dollars (contract v3, `token_budget.usd`); absent or null: none. Every model of the job has a price (checked at submission). */
  usd?: number | null;
  onExhausted: "pause" | "fail";
  /** Shares of the total per stage (map-reduce); a stage's unspent share passes on to the stages after it. */
  allocation?: Record<string, number>;
}

/** The fields every job spec has; each operator adds its own. */
export interface JobSpecBase {
  jobId: string;
  tenantId: string;
  type: string; // the operator's (src/operators/registry.ts: JobType)
  model: string;
  concurrency: number;
  maxRetries: number;
  /** How long a call task may wait on rate limits in all before it fails `rate_limited` (specs stored before it: the default). */
  maxWaitMs?: number;
  /** The job's own rate limit: its calls are paced to at most it (specs stored before it: none). */
  rateLimit?: RateLimit | null;
  webhook: { url: string } | null;
  budget: BudgetSpec | null;
  /** Specs stored before v3: realtime. */
  execution?: ExecutionSpec | null;
  /** Models an item goes to, in order, when the job's model is unavailable (./fallbacks.ts; specs stored before v4: none). */
  fallbacks?: string[];
  /** The job's trace (./tracing.ts): the submitting request's, else its own (specs stored before: none, no spans). */
  trace?: TraceIds;
}

/** A task the plan adds or makes ready. `blocked` tasks exist (their stage's size is known) but wait for earlier outputs. */
export interface TaskSeed {
  stage: string;
  index: number;
  input: unknown;
  blocked?: boolean;
  priority?: number; // lower runs first; the critical path of a plan gets 0
  sessionId?: string | null;
}

export interface TaskView {
  stage: string;
  index: number;
  state: "blocked" | "pending" | "running" | "waiting" | "child" | "done"; // child: an agent waiting for its subtask
  success: boolean | null;
  output: unknown;
  input: unknown;
  error: string | null;
}

/** Read access to the plan's tasks, for the operator's pure functions. */
export interface PlanReader {
  task(stage: string, index: number): TaskView | undefined;
  /** One past the highest index of a stage's tasks so far, 0 for none (an operator that releases a stage's tasks in index order: how many it released). */
  extent(stage: string): number;
  /** Tasks not done, over every stage. */
  open(): number;
  /** The finished tasks of a stage, in index order. */
  done(stage: string): TaskView[];
  /** A stage's size and counters. */
  stage(name: string): StageCounts | undefined;
  /** The first `limit` indices of a stage's tasks the operator finished itself under each of `keys` (Advance `local[].keys`), together, ascending. */
  keyed(stage: string, keys: readonly string[], limit: number): number[];
  /** The outputs of a stage's finished tasks at `indices`, read together (unfinished ones absent). */
  outputs(stage: string, indices: readonly number[]): Map<number, unknown>;
}

/** A stage's size, its finished tasks by outcome, and their usage (./counters.ts). */
export type StageCounts = UsageSums & {
  total: number;
  completed: number;
  succeeded: number;
  failed: number;
};

export interface JobError {
  code: string;
  message: string;
  stage: string | null;
  index: number | null;
  step: string | null;
  /** `stage_too_large`: the stage's documented cap and the size it would have had. */
  details?: { cap: number; size: number };
}

export interface JobEnd {
  status: "completed" | "failed";
  output: unknown;
  error: JobError | null;
}

/**
 * What follows a change in the plan: tasks that become ready, tasks the operator finished itself
 * (no model call: a shuffle), stages whose size is now known, and perhaps the job's end.
 */
export interface Advance {
  ready: TaskSeed[];
  /** `keys`: what the task is filed under in its stage, for `PlanReader.keyed` (an operator's own index). */
  local?: (TaskSeed & { output: unknown; keys?: string[] })[];
  totals?: Record<string, number>;
  end?: JobEnd;
}

/** How one task ended, as the operator's result shape needs it. */
export interface TaskFinish {
  success: boolean;
  output: unknown;
  error: string | null;
  errorKind: ErrorKind | null;
  attempts: number;
  usage: ReturnType<typeof usageOut>;
  /** The task's calls' dollars; null when a call had no price. */
  costUsd: number | null;
  details: Record<string, unknown> | null; // executor-specific fields (an agent's session)
  sessionId: string | null;
}

export type TaskResult = { index: number; success: boolean } & Record<string, unknown>;

export interface StagePlan {
  name: string;
  total: number;
  skipped?: boolean;
  /** What people know the stage as part of (a pipeline's step, by its path): the API groups stages by it, never by their names. */
  step?: string;
}

/** A job's plan as stored at its start: its stages, and the tasks known so far (some blocked). */
export interface Plan {
  stages: StagePlan[];
  tasks: TaskSeed[];
}

/** An operator: the only place that knows what its tasks mean. Every function is pure. */
export interface Operator<S extends JobSpecBase = JobSpecBase> {
  /** v1 jobs (map, agentic-map) keep v1's events and result shapes. */
  readonly v1: boolean;
  /** What MAP_STARTED adds to `{job_id, total, model}` (v1 map: nothing; the others their `type`). */
  readonly startedFields: Record<string, unknown>;
  /** false: the operator's tasks all run in agent sessions, so the job borrows no call workers from the tenant's pool. */
  readonly callWorkers?: boolean;
  mainStage(spec: S): string;
  plan(spec: S, inputs: unknown[]): Plan;
  /** After `trigger` finished (null: re-evaluate everything, after a recover or resume). */
  advance(spec: S, reader: PlanReader, trigger: TaskView | null): Advance;
  work(spec: S, stage: string): StageWork;
  /** Whether a stage's tasks are independent single calls, which `execution.mode` `batch` or `auto` sends through the provider's batch API (absent: none are). */
  batchable?(spec: S, stage: string): boolean;
  /** A task's template variables; `reader` for operators whose tasks read earlier stages' outputs (pipelines). */
  vars(spec: S, task: { stage: string; index: number; input: unknown }, reader?: PlanReader): Record<string, unknown>;
  result(spec: S, task: { stage: string; index: number; input: unknown }, finish: TaskFinish): TaskResult;
  /**
   * What else a recover of these tasks must redo: finished tasks to run again (`rerun`, back to
   * waiting for their inputs), stages whose tasks are dropped, to be planned anew (`drop`), and
   * failed tasks not to re-run after all (`skip`: a pipeline goes on from its failed step).
   */
  redoAfter?(
    spec: S,
    reader: PlanReader,
    tasks: { stage: string; index: number }[],
  ): { rerun: { stage: string; index: number }[]; drop: string[]; skip?: { stage: string; index: number }[] };
  /**
   * The tasks an estimate counts, where the plan cannot list them yet (stages sized later);
   * default: the plan's. `exact`: the task's estimateVars are the vars its run renders with, so
   * its prompt is known (the response cache may answer it). `note` (unless empty) says what the
   * estimate assumed.
   */
  estimateTasks?(spec: S, plan: Plan): { tasks: (TaskSeed & { exact?: boolean })[]; note: string };
  /** For estimates of tasks whose inputs are earlier outputs: variables without them, and the tokens they can add. */
  estimateVars?(spec: S, task: { stage: string; index: number; input: unknown }): { vars: Record<string, unknown>; boundTokens: number };
}

/** What the coordinator hands a worker: a reference to one attempt of one task, never its inputs. */
export interface TaskRef {
  jobId: string;
  stage: string;
  index: number;
  attempt: number;
  token: string; // identifies this dispatch; a claim or report with another token is stale and ignored
  slot: number;
  sessionId: string | null; // agent stages: the task's sub-session
  round: number; // 1, then one more per recover: what a worker caches of the job is per round (a recover may change the model)
  route?: number; // which model of the stage's fallback chain the call goes to (absent: 0, the stage's own; ./fallbacks.ts)
  tier?: "flex"; // the call asks for OpenAI's flex tier (execution mode flex, or auto's ladder on its flex rung: ./execution.ts)
  deployment?: number; // which deployment of the provider's pool the call goes to (absent: 0, the credential's own endpoint)
}

/** What a worker reads back for a current dispatch: the template variables and the retry guidance. */
export interface TaskClaim {
  vars: Record<string, unknown>;
  problems: string[] | null; // what was wrong with the previous output, for the retry guidance
  setup?: StageSetup | null; // when asked for
  subtask?: SubtaskSpawn | null; // a child sub-session's task: what it is for
}

/** A call stage's work with its provider endpoint, resolved once by the coordinator for its workers. */
export interface StageSetup {
  work: StageWork;
  endpoint: EndpointData | null;
}

/** A call worker's next task, handed back in the answer to its report (the pull protocol). */
export interface PulledTask {
  ref: TaskRef;
  claim: TaskClaim;
  setup: StageSetup | null; // when the worker said it does not hold the stage's work for this round
}

/**
 * A call worker's report asks for its slot's next task with this: what it holds already, and the
 * slot and round of the task it reports (a repeated report is answered with the slot's running
 * task, which the worker lost with the answer that handed it over).
 */
export interface PullRequest {
  have: string[];
  slot?: number; // absent from workers of an earlier deploy: no repeated report is answered for them
  round?: number;
  /**
   * The worker's last report got no answer (it threw in this same object's life): a task the
   * coordinator handed in that answer never reached it, so handing it again re-sends nothing.
   * Absent after a restart, when the task may have been under way: its call is counted re-sent.
   */
  unanswered?: boolean;
}

/** What a worker holds already: `<round>:<stage>` keys, so the coordinator sends a stage's setup once. */
/** What a worker caches a stage's setup under: per round, per model of its chain, per service tier (auto's ladder moves a stage from flex to standard), per deployment of a pool. */
export const setupKey = (round: number, stage: string, route = 0, tier?: "flex", deployment = 0): string =>
  `${round}:${stage}${route ? `~${route}` : ""}${tier ? `^${tier}` : ""}${deployment ? `@${deployment}` : ""}`;
