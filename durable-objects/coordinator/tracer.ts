/**
 * A job's trace, collected and exported (contract v4, "Traces (OpenTelemetry)"; the spans are
 * ../../src/engine/tracing.ts's). The collectors: the tenant's (PUT /v1/telemetry; a tenant's
 * destination, through the destination policy) and the deployment's own
 * (`OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`, `OTEL_EXPORTER_OTLP_HEADERS`), read when the job
 * starts (after a restart, at its first report: its spans until then are not kept). Nothing is
 * recorded for a job with no collector.
 *
 * Never delaying a job: a span is built as its call is settled and kept in memory; an export is
 * sent, not awaited, once MAX_BATCH spans wait and when the job ends, each POST bounded by
 * EXPORT_TIMEOUT_MS; a failed one keeps its spans for the next (at most MAX_KEPT: past it the
 * oldest are dropped and counted) and is tried again after a backoff, at most MAX_TRIES times
 * after the job's end. An export's outcome is the tenant's `last_export` (one D1 write when it
 * changes, else at most every RECORD_EVERY_MS, and at the job's end).
 */
import { encryptionKey, readVar } from "../../src/config";
import { recordExport, telemetryConfig } from "../../src/db/telemetry";
import { policyFetch } from "../../src/net/destination";
import { parseModel } from "../../src/llm/models";
import type { AttemptOutcome } from "../../src/engine/retry-policy";
import type { JobSpecBase, StageWork } from "../../src/engine/types";
import type { UsageSums } from "../../src/engine/counters";
import { attributes, exportBody, newSpanId, rootAttributes, span, SPAN_KIND, stageSpanId, type OtlpSpan, type TraceIds } from "../../src/engine/tracing";

const MAX_BATCH = 256; // an export's spans: fewer, larger POSTs (each costs a request and a D1 write)
const RECORD_EVERY_MS = 10_000; // the tenant's last export is written when its outcome changes, else at most this often
const MAX_KEPT = 2_048;
const EXPORT_TIMEOUT_MS = 5_000;
const MAX_TRIES = 3;
const MAX_CONTENT_CHARS = 4_096;
/** A provider's API host when the credential names no base URL of its own (`server.address`). */
const DEFAULT_HOSTS: Record<string, string> = { openai: "api.openai.com", anthropic: "api.anthropic.com" };

interface Target {
  url: string;
  headers: Record<string, string>;
  /** The tenant's: exported through the destination policy, its outcome recorded. */
  tenant: boolean;
  captureContent: boolean;
}

/** A failed attempt's `error.type`: its error kind, or its outcome's kind (null: it succeeded). */
const errorType = (outcome: AttemptOutcome): string | null =>
  outcome.kind === "success" ? null : outcome.kind === "permanent" ? outcome.errorKind : outcome.kind;

/** `OTEL_EXPORTER_OTLP_HEADERS`: `name=value` pairs joined by commas (values URL-encoded, as the OpenTelemetry spec says). */
function envHeaders(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (text ?? "").split(",")) {
    const eq = pair.indexOf("=");
    if (eq > 0) out[pair.slice(0, eq).trim()] = decodeURIComponent(pair.slice(eq + 1).trim());
  }
  return out;
}

export class JobTracer {
  #targets: Target[] | null = null; // null: not read yet
  #reading: Promise<void> | null = null;
  #spans: OtlpSpan[] = [];
  #dropped = 0;
  #sending = false;
  #nextTryAt = 0;
  #failures = 0;
  #ended = false;
  #recorded: { status: number | null; at: number } | null = null;
  readonly #hosts = new Map<string, string>(); // provider → the host its calls go to, where the job's credential names one
  /** Each stage's span id, first call's start and last call's end. */
  readonly #stages = new Map<string, { id: string; start: number; end: number }>();
  /** Call spans' ids: a random 32-bit base and a 32-bit count (unique within the job's trace, no random draw per call). */
  readonly #idBase = newSpanId().slice(0, 8);
  #calls = 0;

  constructor(
    private readonly env: Env,
    private readonly spec: () => JobSpecBase,
  ) {}

  /** Reads the job's collectors (at its start; after a restart, at its first report). */
  load(): Promise<void> {
    this.#reading ??= this.#read().catch((err: unknown) => {
      console.error("could not read the job's trace collectors; its spans are not kept", err);
      this.#targets = [];
    });
    return this.#reading;
  }

  async #read(): Promise<void> {
    const targets: Target[] = [];
    const own = readVar(this.env, "OTEL_EXPORTER_OTLP_ENDPOINT");
    if (own) {
      const url = `${own.replace(/\/+$/, "")}/v1/traces`;
      targets.push({ url, headers: envHeaders(readVar(this.env, "OTEL_EXPORTER_OTLP_HEADERS") ?? undefined), tenant: false, captureContent: false });
    }
    const tenant = await telemetryConfig(this.env.DB, encryptionKey(this.env), this.spec().tenantId);
    if (tenant) targets.push({ url: tenant.endpoint, headers: tenant.headers, tenant: true, captureContent: tenant.captureContent });
    this.#targets = targets;
  }

  /** The host a provider's calls go to, from the job's credential (its base URL; none: the provider's own). */
  server(provider: string, baseUrl: string | null): void {
    if (!baseUrl) return;
    try {
      this.#hosts.set(provider, new URL(baseUrl).hostname);
    } catch {
      // not a URL: the attribute is left out
    }
  }

  /** Whether spans are kept: the job has a trace and a collector (read, or read now for the next ones). */
  #on(): TraceIds | null {
    const trace = this.spec().trace;
    if (!trace) return null;
    if (this.#targets === null) {
      void this.load();
      return null;
    }
    return this.#targets.length > 0 ? trace : null;
  }

  /** One model call settled (a realtime report, or a batch line's result): its CLIENT span under its stage's. */
  call(
    task: { stage: string; idx: number; attempts: number; dispatched_at: number | null },
    workOf: () => StageWork,
    model: string,
    outcome: AttemptOutcome,
    usage: UsageSums,
    now: number,
  ): void {
    const trace = this.#on();
    if (!trace) return;
    const work = workOf();
    if (outcome.spans) return this.#session(trace, task, work, model, outcome, usage, now);
    const start = task.dispatched_at ?? now;
    const stage = this.#stage(trace, task.stage, start, now);
    const call = work.kind === "agent" ? work.agent : work.call;
    const { provider, name } = parseModel(model);
    const embedding = work.kind !== "agent" && work.call.embedding !== undefined;
    const failed = errorType(outcome);
    const content =
      outcome.kind === "success" && this.#targets?.some((t) => t.captureContent) ? JSON.stringify(outcome.output ?? null).slice(0, MAX_CONTENT_CHARS) : null;
    this.#keep(
      span({
        trace,
        spanId: this.#nextId(),
        parentSpanId: stage.id,
        name: `${embedding ? "embeddings" : "chat"} ${name}`,
        kind: SPAN_KIND.client,
        startMs: start,
        endMs: now,
        error: failed && "error" in outcome ? outcome.error : null,
        attributes: attributes({
          "gen_ai.operation.name": embedding ? "embeddings" : "chat",
          "gen_ai.provider.name": provider,
          "gen_ai.request.model": name,
          "gen_ai.request.max_tokens": call.maxTokens,
          "gen_ai.request.temperature": call.temperature,
          "gen_ai.response.model": outcome.answer?.model,
          "gen_ai.response.id": outcome.answer?.id,
          "gen_ai.response.finish_reasons": outcome.answer ? [outcome.answer.finish] : undefined,
          "gen_ai.usage.input_tokens": usage.input_tokens,
          "gen_ai.usage.output_tokens": usage.output_tokens,
          "gen_ai.usage.cache_read.input_tokens": usage.cache_read_tokens || undefined,
          "gen_ai.usage.cache_creation.input_tokens": usage.cache_write_tokens || undefined,
          "error.type": failed,
          "server.address": this.#host(provider),
          "fanout.task.index": task.idx,
          "fanout.attempt": task.attempts,
          "fanout.cost_usd": usage.unpriced_calls > 0 ? undefined : usage.cost_usd,
          "fanout.stage": task.stage,
          "gen_ai.output.messages": content,
        }),
      }),
    );
    this.#sendWhenFull();
  }

  /** A stage's span (made at its first call), stretched to this call's times. */
  #stage(trace: TraceIds, name: string, start: number, end: number): { id: string; start: number; end: number } {
    let stage = this.#stages.get(name);
    if (!stage) this.#stages.set(name, (stage = { id: stageSpanId(trace, name), start, end }));
    stage.start = Math.min(stage.start, start);
    stage.end = Math.max(stage.end, end);
    return stage;
  }

  /** The host a provider's calls go to: the job's credential's, else the provider's own (`server.address`). */
  #host(provider: string): string | undefined {
    return this.#hosts.get(provider) ?? DEFAULT_HOSTS[provider];
  }

  /** A full batch goes out (a job's end sends the rest: `ended`). */
  #sendWhenFull(): void {
    if (this.#spans.length >= MAX_BATCH) this.#send();
  }

  #nextId(): string {
    return this.#idBase + (++this.#calls >>> 0).toString(16).padStart(8, "0");
  }

  /**
   * An agent's sub-session reported (its end, or a child it asked for): an `invoke_agent` span over
   * what it did since its last report, with a CLIENT `chat <model>` span per model call and an
   * `execute_tool <name>` span per tool call under it.
   */
  #session(
    trace: TraceIds,
    task: { stage: string; idx: number; attempts: number; dispatched_at: number | null },
    work: StageWork,
    model: string,
    outcome: AttemptOutcome,
    usage: UsageSums,
    now: number,
  ): void {
    const spans = outcome.spans ?? [];
    const start = Math.min(task.dispatched_at ?? now, ...spans.map((s) => s.start));
    const stage = this.#stage(trace, task.stage, start, now);
    const { provider, name } = parseModel(model);
    const agentId = this.#nextId();
    const failed = outcome.kind === "permanent" ? errorType(outcome) : null; // a child asked for is no error
    for (const s of spans) {
      this.#keep(
        s.kind === "tool"
          ? span({
              trace,
              spanId: this.#nextId(),
              parentSpanId: agentId,
              name: `execute_tool ${s.name}`,
              kind: SPAN_KIND.internal,
              startMs: s.start,
              endMs: s.end,
              error: s.error ? "the tool answered an error" : null,
              attributes: attributes({ "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": s.name, "fanout.task.index": task.idx }),
            })
          : span({
              trace,
              spanId: this.#nextId(),
              parentSpanId: agentId,
              name: `chat ${name}`,
              kind: SPAN_KIND.client,
              startMs: s.start,
              endMs: s.end,
              error: s.error ?? null,
              attributes: attributes({
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": provider,
                "gen_ai.request.model": name,
                "gen_ai.request.max_tokens": work.kind === "agent" ? work.agent.maxTokens : undefined,
                "gen_ai.response.model": s.model,
                "gen_ai.response.id": s.id,
                "gen_ai.response.finish_reasons": s.finish ? [s.finish] : undefined,
                "gen_ai.usage.input_tokens": s.input,
                "gen_ai.usage.output_tokens": s.output,
                "error.type": s.error,
                "server.address": this.#host(provider),
                "fanout.task.index": task.idx,
              }),
            }),
      );
    }
    this.#keep(
      span({
        trace,
        spanId: agentId,
        parentSpanId: stage.id,
        name: `invoke_agent ${name}`,
        kind: SPAN_KIND.internal,
        startMs: start,
        endMs: now,
        error: failed && "error" in outcome ? outcome.error : null,
        attributes: attributes({
          "gen_ai.operation.name": "invoke_agent",
          "gen_ai.provider.name": provider,
          "gen_ai.request.model": name,
          "gen_ai.usage.input_tokens": usage.input_tokens,
          "gen_ai.usage.output_tokens": usage.output_tokens,
          "error.type": failed,
          "fanout.task.index": task.idx,
          "fanout.cost_usd": usage.unpriced_calls > 0 ? undefined : usage.cost_usd,
          "fanout.stage": task.stage,
        }),
      }),
    );
    this.#sendWhenFull();
  }

  /** The job ended: each stage's span and the root, then everything kept goes out. */
  ended(status: string, startedAt: number, now: number): void {
    const trace = this.#on();
    if (!trace || this.#ended) return;
    this.#ended = true;
    const spec = this.spec();
    for (const [stage, times] of this.#stages) {
      this.#keep(
        span({
          trace,
          spanId: times.id,
          parentSpanId: trace.rootSpanId,
          name: `stage ${stage}`,
          kind: SPAN_KIND.internal,
          startMs: times.start,
          endMs: times.end,
          attributes: attributes({ "fanout.stage": stage, "fanout.job.id": spec.jobId }),
        }),
      );
    }
    const root = rootAttributes(spec);
    this.#keep(
      span({
        trace,
        spanId: trace.rootSpanId,
        parentSpanId: trace.parentSpanId,
        name: root.name,
        kind: SPAN_KIND.internal,
        startMs: startedAt,
        endMs: now,
        attributes: [...root.attributes, ...attributes({ "fanout.job.status": status, "fanout.spans_dropped": this.#dropped || undefined })],
        error: status === "failed" ? "the job failed" : null,
      }),
    );
    this.#nextTryAt = 0;
    this.#send(MAX_TRIES);
  }

  #keep(s: OtlpSpan): void {
    this.#spans.push(s);
    if (this.#spans.length > MAX_KEPT) {
      const over = this.#spans.length - MAX_KEPT;
      this.#spans.splice(0, over);
      this.#dropped += over;
    }
  }

  /** Sends what is kept (not awaited by anyone); `tries`: after a failure, how many more times it tries on its own. */
  #send(tries = 0): void {
    if (this.#sending || this.#spans.length === 0 || Date.now() < this.#nextTryAt || !this.#targets?.length) return;
    this.#sending = true;
    const batch = this.#spans.splice(0, this.#spans.length);
    void this.#export(batch).then((ok) => {
      this.#sending = false;
      if (ok) {
        this.#failures = 0;
        return;
      }
      this.#spans.unshift(...batch.slice(-(MAX_KEPT - this.#spans.length)));
      this.#failures++;
      const backoff = Math.min(60_000, 1_000 * 2 ** (this.#failures - 1));
      this.#nextTryAt = Date.now() + backoff;
      if (tries > 1) setTimeout(() => this.#send(tries - 1), backoff);
    });
  }

  /** One POST of the batch to each collector; true when every one took it. */
  async #export(batch: OtlpSpan[]): Promise<boolean> {
    const body = exportBody(batch);
    let ok = true;
    for (const target of this.#targets ?? []) {
      const send = target.tenant ? policyFetch(this.env) : fetch;
      let status: number | null = null;
      let error: string | null = null;
      try {
        const res = await send(target.url, {
          method: "POST",
          headers: { ...target.headers, "content-type": "application/json" },
          body,
          signal: AbortSignal.timeout(EXPORT_TIMEOUT_MS),
        });
        status = res.status;
        await res.body?.cancel().catch(() => undefined);
        if (!res.ok) error = `the collector answered ${res.status}`;
      } catch (err) {
        error = err instanceof Error ? err.message : String(err);
      }
      if (error) ok = false;
      const now = Date.now();
      const news = this.#recorded === null || this.#recorded.status !== status || now - this.#recorded.at >= RECORD_EVERY_MS || this.#ended;
      if (target.tenant && news) {
        this.#recorded = { status, at: now };
        await recordExport(this.env.DB, this.spec().tenantId, status, error, batch.length).catch((err: unknown) =>
          console.error("could not record a trace export", err),
        );
      }
    }
    return ok;
  }
}
