/**
 * The client's types. Every shape the API sends (jobs, results, events, estimates) comes from
 * ./api.ts, generated from the server's OpenAPI document; the options are its request schemas in
 * the client's camelCase spelling (./spelling.ts), so no field is restated here.
 */
import type * as Api from "./api.js";
import type { Camelize } from "./spelling.js";
import type { OPERATORS } from "./operators.js";

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

// ── options: the request schemas of ./api.ts in camelCase (./spelling.ts), never restated ──

/** What every job-creating call adds to its request's fields: the client's own. */
export interface ClientOptions<R> {
  /** Sent as the `Idempotency-Key` header: a retried create returns the first job. */
  idempotencyKey?: string;
  onEvent?: EventHandlers<R>;
}

/** A job request's fields in the client's spelling. */
type RequestOptions<T> = Camelize<NonNullable<T>>;

export type TokenBudget = RequestOptions<Api.TokenBudget>;
export type Webhook = RequestOptions<Api.MapRequest["webhook"]>;
export type Cascade = RequestOptions<Api.Cascade>;
export type HttpTool = RequestOptions<Api.HttpTool>;
export type McpTool = RequestOptions<Api.McpServer>;
export type SubtaskOptions = RequestOptions<Api.Subtasks>;
/** Contract v3 `execution`: map, filter, classify, rank, resolve, map-reduce and pipelines' llm steps (their independent calls). */
export type ExecutionOptions = Pick<RequestOptions<Api.MapRequest>, "execution">;
/** The fields every job-creating request shares. */
export type CommonOptions<R> = Omit<RequestOptions<Api.FilterRequest>, "inputs" | "predicateTemplate" | "cascade" | "retryGuidance" | "execution"> &
  ClientOptions<R>;

/** The server's operators (./operators.ts, generated from its registry), by the client's method name. */
export type OperatorName = keyof typeof OPERATORS;
/** An operator's request in the client's spelling, with the client's own options. */
export type OperatorOptions<N extends OperatorName, R = TaskResult> = RequestOptions<Api.components["schemas"][(typeof OPERATORS)[N]["request"]]> &
  ClientOptions<R>;
/** What `dryRun` names an operator by: its path under /v1 (`map-reduce`, `pipelines`, …). */
export type JobKind = { [N in OperatorName]: (typeof OPERATORS)[N]["path"] extends `/v1/${infer K}` ? K : never }[OperatorName];
/** The operator whose path is `/v1/<kind>`. */
export type OperatorOfKind<K extends JobKind> = { [N in OperatorName]: (typeof OPERATORS)[N]["path"] extends `/v1/${K}` ? N : never }[OperatorName];

/** A map job; with a zod `outputSchema`, results' `output` is typed by it (the schema sent is its JSON Schema). */
export type MapOptions<S, R> = Omit<RequestOptions<Api.MapRequest>, "outputSchema"> & ClientOptions<R> & { outputSchema?: S };
/** An agent's loop: its turns, tools, sub-sessions (an agentic-map job's and a pipeline agent step's). */
export type AgentLoopOptions = Pick<
  RequestOptions<Api.AgenticMapRequest>,
  "maxTurns" | "continuationMessage" | "completionMarker" | "readOnly" | "tools" | "maxContextTokens" | "maxTotalTokens" | "subtasks"
>;
export type AgenticMapOptions = OperatorOptions<"agenticMap", AgentMapResult>;
/** A task's call: its template and what it may override of the job's. */
export type ReduceTask = RequestOptions<Api.ReduceRequest["reduction_task"]>;
/** An ordered fold: `inputs`, an optional per-item `innerTask`, the `reductionTask` folding each in. */
export type ReduceOptions = OperatorOptions<"reduce">;
/** A map-reduce job's options; the job's values are each task's defaults. */
export type MapReduceOptions = OperatorOptions<"mapReduce">;
/** A filter job: results' outputs are `{keep, reason}`; `output()` is `{kept, dropped, failed}`. */
export type FilterOptions = OperatorOptions<"filter">;
/** A classify job: results' outputs are `{label, confidence}` (or `{labels, confidence}`); `output()` is `{counts, failed}`. */
export type ClassifyOptions = OperatorOptions<"classify">;
/** A rank job: `output()` is the top k, `[{index, score, wins?}]` in order. */
export type RankOptions = OperatorOptions<"rank">;
/** An entity-resolution job: `output()` is `{clusters, resolved, failed}`. */
export type ResolveOptions = OperatorOptions<"resolve">;
export type RecoverOptions = RequestOptions<Api.RecoverRequest>;

export type Audit = Api.Audit;

/** Which variables a pipeline step's template sees (defaults by step type; the pipeline's, then the step's, override). */
export type ContextManagement = RequestOptions<Api.ContextManagement>;
/** A step run once per element of a `${ref}` list. */
export type BatchConfig = RequestOptions<Api.PipelineBatch>;
/** A step's named inputs: a `${ref}` string, any literal JSON, or an input task `{task: {...}}` (run in parallel before the step; camelCase like any task). */
export type StepInput = string | number | boolean | null | unknown[] | Record<string, unknown> | { task: RequestOptions<Api.PipelineInputTask> };

/** A step's named inputs in the client's spelling (its input tasks camelCase). */
type WithInputs<T> = Omit<T, "inputs"> & { inputs?: Record<string, StepInput> };
export type LlmStep = WithInputs<RequestOptions<Api.LlmStep>>;
export type AgentStep = WithInputs<RequestOptions<Api.AgentStep>>;
export type ReduceStep = WithInputs<RequestOptions<Api.ReduceStep>>;
export type SequentialStep = Omit<RequestOptions<Api.SequentialStep>, "steps"> & { steps: PipelineStep[] };
/** Its value in the store: `{kept, dropped, failed, items}` (the kept items, in order). */
export type FilterStep = WithInputs<RequestOptions<Api.FilterStep>>;
/** Its value: `{counts, failed, labels}` (each item's label, null for a failed one). */
export type ClassifyStep = WithInputs<RequestOptions<Api.ClassifyStep>>;
/** Its value: the top k, `[{index, score, wins?, item}]`. */
export type RankStep = WithInputs<RequestOptions<Api.RankStep>>;
/** Its value: `{clusters, resolved, failed}`. */
export type ResolveStep = WithInputs<RequestOptions<Api.ResolveStep>>;
export type OperatorStep = FilterStep | ClassifyStep | RankStep | ResolveStep;
export type PipelineStep = LlmStep | AgentStep | ReduceStep | SequentialStep | OperatorStep;

/** A pipeline: steps in order over a shared store (its `inputs`, then each finished step's output by id). */
export type PipelineOptions = Omit<RequestOptions<Api.PipelineRequest>, "steps"> & ClientOptions<TaskResult> & { steps: PipelineStep[] };

/** One entry of `results({ stage: "steps" })`: a finished step and its value in the shared store. */
export interface StepResult {
  index: number;
  success: boolean;
  step: string;
  status: string;
  output: unknown;
  usage: Usage;
}
