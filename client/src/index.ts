/**
 * The Fanout client: `new Fanout({ apiKey, baseUrl })`, then `fanout.map({...})` or
 * `fanout.agenticMap({...})`. A job handle is an AsyncIterable of results in completion order
 * (read from the job's event stream, resumed with Last-Event-ID if the connection drops), with
 * `runAll()`, `cancel()`, `status()`, `results()` and event callbacks. Runs on Node ≥ 20,
 * browsers and Workers (it only needs fetch).
 */
import { FanoutError } from "./errors.js";
import { eventStream } from "./sse.js";
import type {
  AgentMapResult,
  AgenticMapOptions,
  Batch,
  EventHandlers,
  Job,
  MapCompletedEvent,
  MapItemCompletedEvent,
  MapOptions,
  MapResult,
  MapStartedEvent,
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

function compact(body: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
}

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

  /** One API call; non-2xx answers throw a FanoutError. */
  async request<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
    const res = await this.#fetch(`${this.#baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${this.#apiKey}`, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw await FanoutError.fromResponse(res);
    return (res.status === 204 ? undefined : await res.json()) as T;
  }

  /** Opens a job's event stream after `lastEventId`. */
  async openEvents(jobId: string, lastEventId = 0): Promise<Response> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.#apiKey}`, accept: "text/event-stream" };
    if (lastEventId > 0) headers["last-event-id"] = String(lastEventId);
    const res = await this.#fetch(`${this.#baseUrl}/v1/jobs/${jobId}/events`, { headers });
    if (!res.ok) throw await FanoutError.fromResponse(res);
    return res;
  }

  map<S = undefined>(options: MapOptions<S, MapResult<OutputOf<S>>>): JobHandle<MapResult<OutputOf<S>>> {
    const schema = options.outputSchema;
    const created = (async () => {
      // The schema of what the model must produce: the input side of any transforms.
      const outputSchema = isZod(schema) ? (await import("zod")).toJSONSchema(schema as never, { io: "input", unrepresentable: "any" }) : schema;
      return this.request<{ job_id: string }>(
        "POST",
        "/v1/map",
        compact({
          inputs: options.inputs,
          prompt_template: options.promptTemplate,
          output_schema: outputSchema,
          model: options.model,
          system_prompt: options.systemPrompt,
          temperature: options.temperature,
          max_tokens: options.maxTokens,
          timeout_secs: options.timeoutSecs,
          max_retries: options.maxRetries,
          concurrency: options.concurrency,
          retry_guidance: options.retryGuidance,
          webhook: options.webhook,
          metadata: options.metadata,
        }),
        options.idempotencyKey ? { "idempotency-key": options.idempotencyKey } : {},
      );
    })();
    const parse = (result: MapResult<OutputOf<S>>): MapResult<OutputOf<S>> =>
      isZod(schema) && result.success ? { ...result, output: schema.parse(result.output) as OutputOf<S> } : result;
    return new JobHandle(this, created, parse, options.onEvent);
  }

  agenticMap(options: AgenticMapOptions): JobHandle<AgentMapResult> {
    const created = this.request<{ job_id: string }>(
      "POST",
      "/v1/agentic-map",
      compact({
        inputs: options.inputs,
        agent_prompt_template: options.agentPromptTemplate,
        model: options.model,
        system_prompt: options.systemPrompt,
        temperature: options.temperature,
        max_tokens: options.maxTokens,
        max_turns: options.maxTurns,
        continuation_message: options.continuationMessage,
        completion_marker: options.completionMarker,
        read_only: options.readOnly,
        tools: options.tools?.map((t) =>
          t.type === "http"
            ? compact({ type: "http", name: t.name, description: t.description, input_schema: t.inputSchema, url: t.url, read_only: t.readOnly })
            : compact({ type: "mcp", url: t.url, allowed_tools: t.allowedTools }),
        ),
        concurrency: options.concurrency,
        timeout_secs: options.timeoutSecs,
        max_retries: options.maxRetries,
        max_context_tokens: options.maxContextTokens,
        max_total_tokens: options.maxTotalTokens,
        webhook: options.webhook,
        metadata: options.metadata,
      }),
      options.idempotencyKey ? { "idempotency-key": options.idempotencyKey } : {},
    );
    return new JobHandle(this, created, (r) => r, options.onEvent);
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

export class JobHandle<R> implements AsyncIterable<R> {
  readonly #client: Fanout;
  readonly #created: Promise<{ job_id: string }>;
  readonly #parse: (result: R) => R;
  readonly #handlers: EventHandlers<R>;

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

  /** Adds event callbacks (MAP_STARTED, MAP_ITEM_COMPLETED, MAP_COMPLETED). */
  on(handlers: EventHandlers<R>): this {
    Object.assign(this.#handlers, handlers);
    return this;
  }

  /** Results in completion order, as they finish. */
  async *[Symbol.asyncIterator](): AsyncIterator<R> {
    const jobId = await this.id();
    for await (const event of eventStream({ open: (last) => this.#client.openEvents(jobId, last), until: "MAP_COMPLETED" })) {
      if (event.event === "MAP_STARTED") this.#handlers.MAP_STARTED?.(event.data as MapStartedEvent);
      else if (event.event === "MAP_ITEM_COMPLETED") {
        const data = event.data as MapItemCompletedEvent<R>;
        const result = this.#parse(data.result);
        this.#handlers.MAP_ITEM_COMPLETED?.({ ...data, result });
        yield result;
      } else if (event.event === "MAP_COMPLETED") this.#handlers.MAP_COMPLETED?.(event.data as MapCompletedEvent);
    }
  }

  /** Waits for the job to end; then every result, split like the reference library's run_all. */
  async runAll(): Promise<Batch<R>> {
    for await (const result of this) void result; // follow the stream to its end (callbacks fire)
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

  /** Every stored result (all pages), in input or completion order. */
  async results(options: { order?: "input" | "completion"; status?: "succeeded" | "failed" } = {}): Promise<R[]> {
    const jobId = await this.id();
    const out: R[] = [];
    let cursor: string | null = null;
    do {
      const query = new URLSearchParams(compact({ order: options.order, status: options.status, limit: "1000", cursor: cursor ?? undefined }) as Record<string, string>);
      const page: { results: R[]; next_cursor: string | null } = await this.#client.request("GET", `/v1/jobs/${jobId}/results?${query}`);
      out.push(...page.results.map(this.#parse));
      cursor = page.next_cursor;
    } while (cursor);
    return out;
  }
}
