/**
 * The Fanout client: `new Fanout({ apiKey, baseUrl })`, then a method per operator of the
 * server — `fanout.map({...})`, `fanout.agenticMap({...})`, `fanout.pipeline({...})` (or
 * `pipelineDocument(json or xml)`) have their own; `fanout.reduce`, `mapReduce`, `filter`,
 * `classify`, `rank`, `resolve` and any operator the server gains are made from its generated list
 * (./operators.ts), typed by their requests; `fanout.dryRun(kind, options)` estimates a job
 * without creating it. A job handle is an AsyncIterable of results in completion order
 * (read from the job's event stream, resumed with Last-Event-ID if the connection drops), with
 * `runAll()`, `output()`, `cancel()`, `recover()`, `resume()`, `status()`, `results()` and event
 * callbacks. Runs on Node ≥ 20, browsers and Workers (it only needs fetch).
 */
import { FanoutError } from "./errors.js";
import { eventStream } from "./sse.js";
import { compact } from "./compact.js";
import { stepToApi, toApi } from "./spelling.js";
import { OPERATORS } from "./operators.js";
import type {
  AgentMapResult,
  AgenticMapOptions,
  Audit,
  Batch,
  Estimate,
  EventHandlers,
  Job,
  JobKind,
  MapOptions,
  MapResult,
  OperatorName,
  OperatorOfKind,
  OperatorOptions,
  PipelineOptions,
  RecoverOptions,
  TaskResult,
} from "./types.js";

export { FanoutError } from "./errors.js";
export type * from "./types.js";

/** The part of a zod schema the client uses; with it, outputs are parsed and typed. */
export interface ZodLike<T = unknown> {
  _zod: unknown;
  parse(value: unknown): T;
}

type OutputOf<S> = S extends ZodLike<infer T> ? T : unknown;

export interface FanoutOptions {
  apiKey: string;
  baseUrl?: string;
  /** A fetch to use instead of the global one (tests, proxies, custom agents). */
  fetch?: typeof fetch;
}

const isZod = (schema: unknown): schema is ZodLike =>
  typeof schema === "object" && schema !== null && "_zod" in schema && typeof (schema as ZodLike).parse === "function";

// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class Fanout {
  readonly #apiKey: string;
  readonly #baseUrl: string;
  readonly #fetch: typeof fetch;

  constructor(options: FanoutOptions) {
    if (!options.apiKey) throw new FanoutError(0, "unauthorized", "An API key is required (FANOUT_API_KEY).");
    this.#apiKey = options.apiKey;
    this.#baseUrl = (options.baseUrl ?? "http://localhost:8787").replace(/\/$/, "");
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
  }

  /** A fetch that, when the server cannot be reached at all, says which server (`unreachable`, status 0). */
  async #send(url: string, init: RequestInit): Promise<Response> {
    try {
      return await this.#fetch(url, init);
    } catch (err) {
      if (err instanceof Error && err.name === "AbortError") throw err;
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      const why = cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
      throw new FanoutError(0, "unreachable", `Could not reach the Fanout server at ${this.#baseUrl} (${why}). Is it running? Set FANOUT_URL or --url.`);
    }
  }

  /** One API call; non-2xx answers throw a FanoutError. */
  async request<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
    // A string body is sent as it is, with the caller's content type (an XML pipeline).
    const raw = typeof body === "string";
    const res = await this.#send(`${this.#baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${this.#apiKey}`, ...(body === undefined || raw ? {} : { "content-type": "application/json" }), ...headers },
      body: body === undefined ? undefined : raw ? body : JSON.stringify(body),
    });
    if (!res.ok) throw await FanoutError.fromResponse(res);
    return (res.status === 204 ? undefined : await res.json()) as T;
  }

  /** Opens a job's event stream after `lastEventId`. */
  async openEvents(jobId: string, lastEventId = 0): Promise<Response> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.#apiKey}`, accept: "text/event-stream" };
    if (lastEventId > 0) headers["last-event-id"] = String(lastEventId);
    const res = await this.#send(`${this.#baseUrl}/v1/jobs/${jobId}/events`, { headers });
    if (!res.ok) throw await FanoutError.fromResponse(res);
    return res;
  }

  map<S = undefined>(options: MapOptions<S, MapResult<OutputOf<S>>>): JobHandle<MapResult<OutputOf<S>>> {
    const schema = options.outputSchema;
    const created = mapBody(options).then((body) => this.#create(OPERATORS.map.path, body, options.idempotencyKey));
    const parse = (result: MapResult<OutputOf<S>>): MapResult<OutputOf<S>> =>
      isZod(schema) && result.success ? { ...result, output: schema.parse(result.output) as OutputOf<S> } : result;
    return new JobHandle(this, created, parse, options.onEvent);
  }

  agenticMap(options: AgenticMapOptions): JobHandle<AgentMapResult> {
    return new JobHandle(this, this.#create(OPERATORS.agenticMap.path, jobBody(options), options.idempotencyKey), (r) => r, options.onEvent);
  }

  /** A pipeline: steps in order over a shared store; the handle yields every finished task; `output()` is the last step's value. */
  pipeline(options: PipelineOptions): JobHandle<TaskResult> {
    return new JobHandle(this, this.#create(OPERATORS.pipeline.path, pipelineBody(options), options.idempotencyKey), (r) => r, options.onEvent);
  }

  /** A job of an operator with no method of its own (./operators.ts): its options sent as they are spelled. */
  createJob<N extends OperatorName>(name: N, options: OperatorOptions<N>): JobHandle<TaskResult> {
    return new JobHandle(this, this.#create(OPERATORS[name].path, jobBody(options), options.idempotencyKey), (r) => r, options.onEvent);
  }

  /**
   * A pipeline from a document as the API takes it: a JSON body (an object, in the API's spelling)
   * or the XML task format (a string). `params` are pipeline fields sent in the query string (an
   * XML document's root attributes win over them; a JSON document's own fields win too).
   */
  pipelineDocument(
    document: Record<string, unknown> | string,
    params: { model?: string; inputs?: Record<string, unknown>; dryRun?: boolean } = {},
    onEvent?: EventHandlers<TaskResult>,
  ): JobHandle<TaskResult> {
    return new JobHandle(this, this.#pipelineDocument(document, params) as Promise<{ job_id: string }>, (r) => r, onEvent);
  }

  /** The estimate of a pipeline document (see `pipelineDocument`). */
  async estimateDocument(document: Record<string, unknown> | string, params: { model?: string; inputs?: Record<string, unknown> } = {}): Promise<Estimate> {
    return ((await this.#pipelineDocument(document, { ...params, dryRun: true })) as { estimate: Estimate }).estimate;
  }

  #pipelineDocument(
    document: Record<string, unknown> | string,
    params: { model?: string; inputs?: Record<string, unknown>; dryRun?: boolean },
  ): Promise<unknown> {
    if (typeof document !== "string") {
      const body = { ...compact({ model: params.model, inputs: params.inputs }), ...document };
      return this.request("POST", `/v1/pipelines${params.dryRun ? "?dry_run=true" : ""}`, body);
    }
    const query = new URLSearchParams(
      compact({
        model: params.model,
        inputs: params.inputs ? JSON.stringify(params.inputs) : undefined,
        dry_run: params.dryRun ? "true" : undefined,
      }) as Record<string, string>,
    ).toString();
    return this.request("POST", `/v1/pipelines${query ? `?${query}` : ""}`, document, { "content-type": "application/xml" });
  }

  /** The estimate of a job, after every check a submission runs; nothing is created. `kind`: the operator's path under /v1 (`map`, `map-reduce`, `pipelines`, …). */
  async dryRun<K extends JobKind>(kind: K, options: DryRunOptions<K>): Promise<Estimate> {
    const body = kind === "map" ? await mapBody(options as AnyMapOptions) : kind === "pipelines" ? pipelineBody(options as PipelineOptions) : jobBody(options);
    return (await this.request<{ estimate: Estimate }>("POST", `/v1/${kind}?dry_run=true`, body)).estimate;
  }

  #create(path: string, body: Record<string, unknown>, idempotencyKey: string | undefined): Promise<{ job_id: string }> {
    return this.request<{ job_id: string }>("POST", path, body, idempotencyKey ? { "idempotency-key": idempotencyKey } : {});
  }

  /** A handle for a job created earlier (e.g. by its id from `fanout jobs`). */
  job<R = MapResult>(jobId: string): JobHandle<R> {
    return new JobHandle<R>(this, Promise.resolve({ job_id: jobId }), (r) => r);
  }

  async jobs(options: { status?: Job["status"]; limit?: number; cursor?: string } = {}): Promise<{ jobs: Job[]; next_cursor: string | null }> {
    const query = new URLSearchParams(compact(options) as Record<string, string>).toString();
    return this.request("GET", `/v1/jobs${query ? `?${query}` : ""}`);
  }
}

/** The operators' methods the client makes from the server's list (./operators.ts): every one but those with a method of their own. */
type Generic = Exclude<OperatorName, "map" | "agenticMap" | "pipeline">;
export type OperatorMethods = { [N in Generic]: (options: OperatorOptions<N>) => JobHandle<TaskResult> };
/** A dry run's options: map's and pipelines' own, the operator's request for the others. */
type DryRunOptions<K extends JobKind> = K extends "map"
  ? MapOptions<unknown, MapResult>
  : K extends "pipelines"
    ? PipelineOptions
    : OperatorOptions<OperatorOfKind<K>>;

// An operator the server gains is a method of the client once ./operators.ts is generated again: no line here.
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging, @typescript-eslint/no-empty-object-type
export interface Fanout extends OperatorMethods {}
for (const name of Object.keys(OPERATORS) as OperatorName[]) {
  if (name in Fanout.prototype) continue;
  Object.defineProperty(Fanout.prototype, name, {
    value(this: Fanout, options: OperatorOptions<Generic>) {
      return this.createJob(name as Generic, options);
    },
  });
}

export class JobHandle<R> implements AsyncIterable<R> {
  readonly #client: Fanout;
  readonly #created: Promise<{ job_id: string }>;
  readonly #parse: (result: R) => R;
  readonly #handlers: EventHandlers<R>;
  #ended = false; // the stream was followed to MAP_COMPLETED: waiting again needs no second pass

  constructor(client: Fanout, created: Promise<{ job_id: string }>, parse: (result: R) => R, handlers: EventHandlers<R> = {}) {
    this.#client = client;
    this.#created = created;
    this.#parse = parse;
    this.#handlers = handlers;
    created.catch(() => undefined); // surfaced by whoever awaits the handle
  }

  /** The job's id, once the API accepted it. */
  async id(): Promise<string> {
    return (await this.#created).job_id;
  }

  /** Adds event callbacks (MAP_STARTED, MAP_ITEM_COMPLETED or TASK_COMPLETED, STAGE_*, SUBTASK_*, JOB_*, CONCURRENCY_CHANGED, MAP_COMPLETED); each adds to those given before. */
  on(handlers: EventHandlers<R>): this {
    for (const [name, handler] of Object.entries(handlers) as [keyof EventHandlers<R>, (d: unknown) => void][]) {
      const before = this.#handlers[name] as ((d: unknown) => void) | undefined;
      const both = (d: unknown) => {
        before?.(d);
        handler(d);
      };
      (this.#handlers as Record<string, (d: unknown) => void>)[name] = before ? both : handler;
    }
    return this;
  }

  /** Results in completion order, as they finish. */
  async *[Symbol.asyncIterator](): AsyncIterator<R> {
    const jobId = await this.id();
    for await (const event of eventStream({ open: (last) => this.#client.openEvents(jobId, last), until: "MAP_COMPLETED" })) {
      const name = event.event as keyof EventHandlers<R>;
      if (name === "MAP_ITEM_COMPLETED" || name === "TASK_COMPLETED") {
        const data = event.data as { result: R };
        const result = this.#parse(data.result);
        (this.#handlers[name] as ((d: unknown) => void) | undefined)?.({ ...data, result });
        yield result;
      } else (this.#handlers[name] as ((d: unknown) => void) | undefined)?.(event.data);
    }
    this.#ended = true;
  }

  /** Follows the stream to the job's end (callbacks fire), unless that was done already. */
  async #waitForEnd(): Promise<void> {
    if (this.#ended) return;
    for await (const result of this) void result;
  }

  /** Waits for the job to end; its final value (reduce: the final accumulator; null for map jobs). */
  async output(): Promise<unknown> {
    await this.#waitForEnd();
    return (await this.status()).output;
  }

  /** Re-runs the failed and unfinished tasks of an ended job (same id and stream); finished tasks are kept. */
  async recover(options: RecoverOptions = {}): Promise<{ job_id: string; status: "running"; recovering: number }> {
    this.#ended = false; // the job runs again: its stream goes on to a new MAP_COMPLETED
    const body = compact({
      model: options.model,
      max_retries: options.maxRetries,
      timeout_secs: options.timeoutSecs,
      error_kinds: options.errorKinds,
      token_budget: options.tokenBudget,
    });
    return this.#client.request("POST", `/v1/jobs/${await this.id()}/recover`, body);
  }

  /** A map-reduce job's trail: every call, the documents behind it, the calls that fed it. */
  async audit(): Promise<Audit> {
    return this.#client.request("GET", `/v1/jobs/${await this.id()}/audit`);
  }

  /** A job paused by its budget goes on; `tokenBudget`: a new token total, or new limits in tokens and dollars. */
  async resume(tokenBudget?: number | { total?: number; usd?: number }): Promise<Job> {
    const limits = typeof tokenBudget === "number" ? { total: tokenBudget } : tokenBudget;
    const body = limits === undefined ? {} : { token_budget: compact({ total: limits.total, usd: limits.usd }) };
    return this.#client.request("POST", `/v1/jobs/${await this.id()}/resume`, body);
  }

  /** Waits for the job to end; then every result, split like the reference library's run_all. */
  async runAll(): Promise<Batch<R>> {
    await this.#waitForEnd();
    const jobId = await this.id();
    const batch = await this.#client.request<{ job_id: string; successes: R[]; failures: R[]; total: number; total_attempts: number }>(
      "GET",
      `/v1/jobs/${jobId}/batch`,
    );
    return {
      jobId: batch.job_id,
      successes: batch.successes.map(this.#parse),
      failures: batch.failures,
      total: batch.total,
      totalAttempts: batch.total_attempts,
    };
  }

  async status(): Promise<Job> {
    return this.#client.request("GET", `/v1/jobs/${await this.id()}`);
  }

  async cancel(): Promise<Job> {
    return this.#client.request("POST", `/v1/jobs/${await this.id()}/cancel`);
  }

  /** Deletes the ended job with everything it left (a FanoutError `conflict` while it has not ended). */
  async delete(): Promise<void> {
    await this.#client.request("DELETE", `/v1/jobs/${await this.id()}`);
  }

  /** Every stored result (all pages) of a stage (default: the job's main stage), in input or completion order. */
  /**
   * Every result of a stage (the job's main stage by default); `kept`: a filter job's kept (true) or
   * dropped (false) items only; `failed`: an evaluation's items the judge failed (true) or passed (false).
   */
  async results(
    options: { stage?: string; order?: "input" | "completion"; status?: "succeeded" | "failed"; kept?: boolean; failed?: boolean } = {},
  ): Promise<R[]> {
    const jobId = await this.id();
    const out: R[] = [];
    let cursor: string | null = null;
    do {
      const query = new URLSearchParams(
        compact({
          stage: options.stage,
          order: options.order,
          status: options.status,
          kept: options.kept === undefined ? undefined : String(options.kept),
          failed: options.failed === undefined ? undefined : String(options.failed),
          limit: "1000",
          cursor: cursor ?? undefined,
        }) as Record<string, string>,
      );
      const page: { results: R[]; next_cursor: string | null } = await this.#client.request("GET", `/v1/jobs/${jobId}/results?${query}`);
      out.push(...page.results.map(this.#parse));
      cursor = page.next_cursor;
    } while (cursor);
    return out;
  }
}

// ── request bodies: the options in the API's spelling (./spelling.ts) ─────────────────────────

type Options = Record<string, unknown> & { onEvent?: unknown; idempotencyKey?: unknown };
type AnyMapOptions = Omit<MapOptions<unknown, never>, "onEvent">;

/** A job's request body: its options but the client's own, in the API's spelling. */
function jobBody(options: object): Record<string, unknown> {
  return toApi({ ...(options as Options), onEvent: undefined, idempotencyKey: undefined }) as Record<string, unknown>;
}

/** A map job's: with a zod output schema, the schema of what the model must produce (the input side of any transforms). */
async function mapBody(o: AnyMapOptions): Promise<Record<string, unknown>> {
  const schema = o.outputSchema;
  const outputSchema = isZod(schema) ? (await import("zod")).toJSONSchema(schema as never, { io: "input", unrepresentable: "any" }) : schema;
  return jobBody({ ...o, outputSchema }); // sent as given, like any JSON Schema (./spelling.ts)
}

/** A pipeline's: its steps re-spelled one by one (their input tasks too). */
function pipelineBody(o: Omit<PipelineOptions, "onEvent">): Record<string, unknown> {
  return { ...jobBody({ ...o, steps: undefined }), steps: o.steps.map((step) => stepToApi(step as Record<string, unknown>)) };
}
