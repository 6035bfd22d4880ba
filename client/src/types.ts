/**
 * The client's types. Every shape the API sends (jobs, results, events, estimates) comes from
 * ./api.ts, generated from the server's OpenAPI document; the options below are the client's
 * camelCase spelling of the request fields.
 */
import type * as Api from "./api.js";

export type Usage = Api.Usage;
export type Job = Api.Job;
export type JobError = Api.JobError;
export type Budget = Api.Budget;
export type Stage = Api.Stage;
export type Estimate = Api.Estimate["estimate"];
export type AgentMapResult = Api.AgentMapResult;
/** A map item's result; with a zod output schema, `output` is typed by it. */
export type MapResult<T = unknown> = Omit<Api.MapResult, "output"> & { output: T | null };
/** A finished task of a staged job (reduce: `name`, and `accumulator` for reductions). */
export type TaskResult<T = unknown> = Omit<Api.TaskResult, "output"> & { output: T | null; name?: string; accumulator?: unknown };

export interface Batch<R> {
  jobId: string;
  successes: R[];
  failures: R[];
  total: number;
  totalAttempts: number;
}

export type MapStartedEvent = Api.MapStartedEvent;
export type MapItemCompletedEvent<R> = Omit<Api.MapItemCompletedEvent, "result"> & { result: R };
export type MapCompletedEvent = Api.MapCompletedEvent;
export type TaskCompletedEvent<R> = Omit<Api.TaskCompletedEvent, "result"> & { result: R };
export type StageStartedEvent = Api.StageStartedEvent;
export type StageCompletedEvent = Api.StageCompletedEvent;
export type JobPausedEvent = Api.JobPausedEvent;
export type JobResumedEvent = Api.JobResumedEvent;
export type JobRecoveringEvent = Api.JobRecoveringEvent;
export type ConcurrencyChangedEvent = Api.ConcurrencyChangedEvent;
export type SubtaskStartedEvent = Api.SubtaskStartedEvent;
export type SubtaskCompletedEvent = Api.SubtaskCompletedEvent;
export type PacingChangedEvent = Api.PacingChangedEvent;
export type BatchSubmittedEvent = Api.BatchSubmittedEvent;
export type BatchProgressEvent = Api.BatchProgressEvent;
export type BatchEndedEvent = Api.BatchEndedEvent;

export interface EventHandlers<R> {
  MAP_STARTED?: (data: MapStartedEvent) => void;
  MAP_ITEM_COMPLETED?: (data: MapItemCompletedEvent<R>) => void;
  TASK_COMPLETED?: (data: TaskCompletedEvent<R>) => void;
  STAGE_STARTED?: (data: StageStartedEvent) => void;
  STAGE_COMPLETED?: (data: StageCompletedEvent) => void;
  JOB_PAUSED?: (data: JobPausedEvent) => void;
  JOB_RESUMED?: (data: JobResumedEvent) => void;
  JOB_RECOVERING?: (data: JobRecoveringEvent) => void;
  /** The provider pushed back (or successes grew the limit back): the calls the job may have in flight now. */
  CONCURRENCY_CHANGED?: (data: ConcurrencyChangedEvent) => void;
  SUBTASK_STARTED?: (data: SubtaskStartedEvent) => void;
  SUBTASK_COMPLETED?: (data: SubtaskCompletedEvent) => void;
  PACING_CHANGED?: (data: PacingChangedEvent) => void;
  /** Execution mode batch or auto: a provider batch was sent, its counts changed, it ended (its lines' results follow). */
  BATCH_SUBMITTED?: (data: BatchSubmittedEvent) => void;
  BATCH_PROGRESS?: (data: BatchProgressEvent) => void;
  BATCH_ENDED?: (data: BatchEndedEvent) => void;
  MAP_COMPLETED?: (data: MapCompletedEvent) => void;
}

/** Tokens (`total`), dollars (`usd`) or both (contract v3). */
export interface TokenBudget {
  total?: number;
  usd?: number;
  onExhausted?: "pause" | "fail";
}

/** Contract v3 `execution`: map, filter, classify, rank, resolve, map-reduce and pipelines' llm steps (their independent calls). */
export interface ExecutionOptions {
  /** realtime (default); batch: the provider's batch API, half the price within its 24 h window; auto: batch first, realtime before the deadline. */
  execution?: { mode: "realtime" | "batch" | "auto"; deadlineSecs?: number };
}

export interface Webhook {
  url: string;
  secret?: string;
}

export interface CommonOptions<R> {
  model: string;
  systemPrompt?: string;
  temperature?: number;
  maxTokens?: number;
  timeoutSecs?: number;
  maxRetries?: number;
  concurrency?: number;
  webhook?: Webhook;
  metadata?: Record<string, unknown>;
  tokenBudget?: TokenBudget;
  /** The response cache: reuse this tenant's validated answers to identical calls made within ttlSecs (not for agents). */
  cache?: { ttlSecs: number };
  /** false: never mark the shared prefix for Anthropic's prompt cache (default: marked when long enough). */
  promptCache?: boolean;
  idempotencyKey?: string;
  onEvent?: EventHandlers<R>;
}

export interface MapOptions<S, R> extends CommonOptions<R>, ExecutionOptions {
  inputs: unknown[];
  promptTemplate: string;
  /** A zod schema (outputs are then typed and parsed by it) or a JSON Schema object. */
  outputSchema?: S;
  retryGuidance?: string;
}

export type HttpTool = { type: "http"; name: string; description?: string; inputSchema?: Record<string, unknown>; url: string; readOnly?: boolean };
export type McpTool = { type: "mcp"; url: string; allowedTools?: string[] };

/** An agent's loop: the fields an agentic-map job and a pipeline's agent step share. */
export interface AgentLoopOptions {
  maxTurns?: number;
  continuationMessage?: string;
  completionMarker?: string;
  readOnly?: boolean;
  tools?: (HttpTool | McpTool)[];
  maxContextTokens?: number;
  maxTotalTokens?: number;
  subtasks?: SubtaskOptions;
}

export interface AgenticMapOptions extends Omit<CommonOptions<AgentMapResult>, "cache">, AgentLoopOptions {
  inputs: unknown[];
  agentPromptTemplate: string;
}

/** Offer the agent a `spawn_subtask` tool: child sub-sessions with its model and tools. */
export interface SubtaskOptions {
  enabled?: boolean;
  maxDepth?: number;
  /** The whole chain's tokens. */
  maxTotalTokens?: number;
  /** The whole chain's time. */
  timeoutSecs?: number;
}

/** One task of a fold; the fold's values are its defaults. */
export interface ReduceTask {
  promptTemplate: string;
  outputSchema?: Record<string, unknown>;
  model?: string;
  systemPrompt?: string;
  maxTokens?: number;
  temperature?: number;
}

export interface ReduceOptions extends CommonOptions<TaskResult> {
  /** A list, or named inputs (an object, taken in key order). */
  inputs: unknown[] | Record<string, unknown>;
  initialValue?: unknown;
  innerTask?: ReduceTask;
  reductionTask: ReduceTask;
  retryGuidance?: string;
}

/** A model cascade (filter, classify): the cheaper model answers every item first; only what it is unsure of goes on to `model`. */
export interface Cascade {
  model: string;
  acceptAbove?: number;
  /** Filter only. */
  rejectBelow?: number;
}

/** A filter job: results' outputs are `{keep, reason}`; `output()` is `{kept, dropped, failed}`. */
export interface FilterOptions extends CommonOptions<TaskResult>, ExecutionOptions {
  inputs: unknown[];
  predicateTemplate: string;
  cascade?: Cascade;
  retryGuidance?: string;
}

/** A classify job: results' outputs are `{label, confidence}` (or `{labels, confidence}`); `output()` is `{counts, failed}`. */
export interface ClassifyOptions extends CommonOptions<TaskResult>, ExecutionOptions {
  inputs: unknown[];
  categories: { name: string; description?: string }[];
  multiLabel?: boolean;
  promptTemplate?: string;
  cascade?: Cascade;
  retryGuidance?: string;
}

/** A rank job: `output()` is the top k, `[{index, score, wins?}]` in order. */
export interface RankOptions extends CommonOptions<TaskResult>, ExecutionOptions {
  inputs: unknown[];
  criteria: string;
  k: number;
  promptTemplate?: string;
  comparisonTemplate?: string;
  retryGuidance?: string;
}

/** An entity-resolution job: `output()` is `{clusters, resolved, failed}`. */
export interface ResolveOptions extends CommonOptions<TaskResult>, ExecutionOptions {
  inputs: unknown[];
  comparisonTemplate: string;
  blocking: { keys: string[]; method?: "exact" | "prefix" | "trigram"; threshold?: number };
  resolutionTemplate?: string;
  /** A JSON Schema for each resolution's output. */
  outputSchema?: Record<string, unknown>;
  maxComparisons?: number;
  retryGuidance?: string;
}

export interface RecoverOptions {
  model?: string;
  maxRetries?: number;
  timeoutSecs?: number;
  errorKinds?: NonNullable<Api.ErrorKind>[];
  tokenBudget?: { total: number };
}

/** A map-reduce job's options; the job's values are each task's defaults. */
export interface MapReduceOptions extends Omit<CommonOptions<TaskResult>, "concurrency" | "tokenBudget">, ExecutionOptions {
  inputs: unknown[];
  mapper: ReduceTask;
  docsPerMapper?: number;
  maxParallelMappers?: number;
  shuffle?: { key?: string; dedupe?: "exact" | "none"; dedupeFields?: string[]; conflict?: "first" | "most_frequent" | "highest_confidence" };
  reducer: ReduceTask;
  reductionStrategy?: "hierarchical" | "flat" | "category";
  fanIn?: number;
  synthesis?: ReduceTask;
  mapFailures?: "fail" | "continue";
  retryGuidance?: string;
  tokenBudget?: TokenBudget & { allocation?: { map: number; shuffle: number; reduce: number; synthesis: number } };
}

export type Audit = Api.Audit;

/** Which variables a pipeline step's template sees (defaults by step type; the pipeline's, then the step's, override). */
export interface ContextManagement {
  inheritContext?: "full" | "none" | "subset";
  accumulateData?: boolean;
  accumulationFormat?: "notes_only" | "full_output";
  subset?: string[];
}

/** A step run once per element of a `${ref}` list. */
export interface BatchConfig {
  items: string;
  as?: string;
  errorHandling?: "fail_fast" | "continue";
  maxConcurrent?: number;
}

/** A step's named inputs: a `${ref}` string, any literal JSON, or an input task (run in parallel before the step). */
export type StepInput = string | number | boolean | null | unknown[] | Record<string, unknown> | { task: ReduceTask & { inputs?: Record<string, unknown> } };

interface StepBase {
  id: string;
  contextManagement?: ContextManagement;
  inputs?: Record<string, StepInput>;
}
export interface LlmStep extends StepBase, ReduceTask, ExecutionOptions {
  type: "llm";
  batch?: BatchConfig;
}
export interface AgentStep extends StepBase, AgentLoopOptions {
  type: "agent";
  promptTemplate: string;
  model?: string;
  systemPrompt?: string;
  temperature?: number;
  maxTokens?: number;
  batch?: BatchConfig;
}
export interface ReduceStep extends StepBase {
  type: "reduce";
  inputsFrom: string;
  initialValue?: unknown;
  innerTask?: ReduceTask;
  reductionTask: ReduceTask;
}
export interface SequentialStep {
  id: string;
  type: "sequential";
  contextManagement?: ContextManagement;
  steps: PipelineStep[];
}
/** A step that runs an operator over the list at `inputsFrom` (a `${ref}`): its fields but the job's, the pipeline's where unset. */
interface OperatorStepBase extends ExecutionOptions {
  id: string;
  contextManagement?: ContextManagement;
  /** Named values its templates see besides the operator's own (no input tasks). */
  inputs?: Record<string, Exclude<StepInput, { task: unknown }>>;
  inputsFrom: string;
  model?: string;
  systemPrompt?: string;
  maxTokens?: number;
  temperature?: number;
  timeoutSecs?: number;
}
/** Its value in the store: `{kept, dropped, failed, items}` (the kept items, in order). */
export interface FilterStep extends OperatorStepBase, Pick<FilterOptions, "predicateTemplate" | "cascade"> {
  type: "filter";
}
/** Its value: `{counts, failed, labels}` (each item's label, null for a failed one). */
export interface ClassifyStep extends OperatorStepBase, Pick<ClassifyOptions, "categories" | "multiLabel" | "promptTemplate" | "cascade"> {
  type: "classify";
}
/** Its value: the top k, `[{index, score, wins?, item}]`. */
export interface RankStep extends OperatorStepBase, Pick<RankOptions, "criteria" | "k" | "promptTemplate" | "comparisonTemplate"> {
  type: "rank";
}
/** Its value: `{clusters, resolved, failed}`. */
export interface ResolveStep extends OperatorStepBase, Pick<ResolveOptions, "comparisonTemplate" | "blocking" | "resolutionTemplate" | "outputSchema" | "maxComparisons"> {
  type: "resolve";
}
export type OperatorStep = FilterStep | ClassifyStep | RankStep | ResolveStep;
export type PipelineStep = LlmStep | AgentStep | ReduceStep | SequentialStep | OperatorStep;

/** A pipeline: steps in order over a shared store (its `inputs`, then each finished step's output by id). */
export interface PipelineOptions extends CommonOptions<TaskResult>, ExecutionOptions {
  inputs?: Record<string, unknown>;
  contextManagement?: ContextManagement;
  steps: PipelineStep[];
  retryGuidance?: string;
}

/** One entry of `results({ stage: "steps" })`: a finished step and its value in the shared store. */
export interface StepResult {
  index: number;
  success: boolean;
  step: string;
  status: string;
  output: unknown;
  usage: Usage;
}
