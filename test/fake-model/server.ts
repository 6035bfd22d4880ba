/**
 * A fake model server that speaks the OpenAI Chat Completions and Anthropic Messages wire formats
 * (plain and streaming), so the real SDKs are exercised. Scripted faults come from a directive in
 * the prompt (./script.ts); counters per tag are read at GET /_fake/stats?tag=T.
 *
 * Run it alone: `node test/fake-model/server.ts --port 8790 [--latency-ms 200]`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { answerFor, parseDirective, type StepAnswer } from "./script.ts";
import { SUMMARY_REQUEST } from "../../src/agent/compaction.ts";
import { FakeModelListing } from "./models.ts";
import { FakeCollector } from "./collector.ts";
import { FakeOutages, outageAnswer } from "./outages.ts";
import { embeddingBody } from "./embeddings.ts";
import { openAiBody, openAiStream, anthropicBody, anthropicStream, estimateTokens, servedTier, type Reply } from "./wire.ts";
import { logprobsOf, logprobsRefusal, takeProbability } from "./logprobs.ts";
import { RateLimits, type LimitConfig } from "./limits.ts";
import { Gates } from "./gates.ts";
import { FakePromptCache, systemText } from "./prompt-cache.ts";
import { FakeBatches } from "./batches.ts";

export interface TagStats {
  requests: number;
  rate_limited: number; // answered 429 by the key's rate limits (POST /_fake/limits)
  compactions: number;
  summaries_seen: number; // requests whose context carried a compaction summary note
  tool_results: string[];
  tools_offered: string[][];
  in_flight: number;
  held: number; // calls waiting at the tag's gate (`gate=`)
  max_in_flight: number;
  throttled: number; // calls answered 429 for being past the tag's capacity (`cap=`)
  served_max_in_flight: number; // the most calls in flight that were served (not throttled)
  auth: string[];
  prompts: string[];
  times: number[];
  models: string[]; // each request's model, in arrival order (at most MAX_PROMPTS_KEPT)
  batched: number; // of `requests`: those that came as lines of a provider batch
}

export interface FakeModelServer {
  url: string;
  port: number;
  server: Server;
  close(): Promise<void>;
}

export interface FakeOptions {
  port?: number;
  latencyMs?: number;
  /** How long a provider batch takes to end, from its creation (./batches.ts; default 300 ms). */
  batchDelayMs?: number;
  /** Fraction of un-scripted calls that answer 429 (Retry-After 1) on their first try, and that answer prose first. */
  rateLimitFraction?: number;
  proseFraction?: number;
}

const MAX_PROMPTS_KEPT = 2_000;
/** A step for one model: `gpt-6-luna~json:…` (the model as the request names it, no provider), or for its calls on one tier: `gpt-6-luna@flex~busy`. */
const MODEL_STEP = /^([\w.-]+)(?:@(flex|default))?~(.*)$/;

type Format = "openai" | "anthropic";

/** One request's answer: JSON, an SSE stream, or (a batch line only) expired before it was processed. */
export interface Answered {
  status: number;
  headers: Record<string, string>;
  json?: Json;
  sse?: string;
  expired?: boolean;
}

/** The API key a request carries, in either provider's header. */
const apiKeyOf = (req: IncomingMessage): string => String(req.headers["x-api-key"] ?? String(req.headers.authorization ?? "").replace(/^Bearer /, ""));

function readRaw(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

const readBody = async (req: IncomingMessage): Promise<string> => (await readRaw(req)).toString("utf8");

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Json = Record<string, unknown>;

function blockText(b: Json): string {
  if (typeof b.text === "string") return b.text;
  if (typeof b.content === "string") return b.content;
  if (Array.isArray(b.content)) return b.content.map((c: Json) => blockText(c)).join("\n");
  return "";
}

function messageText(m: Json): string {
  if (typeof m.content === "string") return m.content;
  return Array.isArray(m.content) ? m.content.map((b: Json) => blockText(b)).join("\n") : "";
}

/** Tool results in either format: OpenAI `tool` messages, Anthropic `tool_result` blocks. */
function toolResults(messages: unknown): string[] {
  if (!Array.isArray(messages)) return [];
  const out: string[] = [];
  for (const m of messages as Json[]) {
    if (m.role === "tool") out.push(messageText(m));
    if (Array.isArray(m.content)) for (const b of m.content as Json[]) if (b.type === "tool_result") out.push(blockText(b));
  }
  return out;
}

function toolNames(body: Json): string[] {
  if (!Array.isArray(body.tools)) return [];
  return (body.tools as Json[]).map((t) => String((t.function as Json | undefined)?.name ?? t.name));
}

/** The JSON Schema a request asks for: OpenAI `response_format`, or Anthropic's forced tool. */
function requestedSchema(body: Json): Json | null {
  const format = body.response_format as Json | undefined;
  const jsonSchema = format?.json_schema as Json | undefined;
  if (jsonSchema?.schema) return jsonSchema.schema as Json;
  const choice = body.tool_choice as Json | undefined;
  if (choice?.type === "tool" && Array.isArray(body.tools)) {
    const tool = (body.tools as Json[]).find((t) => t.name === choice.name);
    return (tool?.input_schema as Json | undefined) ?? null;
  }
  return null;
}

function lastUserText(messages: unknown): string {
  if (!Array.isArray(messages)) return "";
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as Json;
    if (m.role !== "user") continue;
    if (typeof m.content === "string") return m.content;
    if (Array.isArray(m.content)) {
      // Text blocks are one text (a prompt split where its cached prefix ends); tool results are lines.
      const blocks = m.content as Json[];
      if (blocks.every((b) => b.type === "text")) return blocks.map((b) => String(b.text ?? "")).join("");
      return blocks.map((b: Json) => (typeof b.text === "string" ? b.text : typeof b.content === "string" ? b.content : "")).join("\n");
    }
  }
  return "";
}

/** OpenAI's system (or developer) messages' text. */
function openAiSystem(messages: unknown): string {
  if (!Array.isArray(messages)) return "";
  return (messages as Json[])
    .filter((m) => m.role === "system" || m.role === "developer")
    .map(messageText)
    .join("");
}

/** Deterministic per-prompt fraction in [0, 1), so the same item behaves the same way everywhere. */
function hashFraction(text: string, salt: string): number {
  let h = 2166136261;
  for (const ch of salt + text) h = Math.imul(h ^ ch.charCodeAt(0), 16777619);
  return ((h >>> 0) % 10_000) / 10_000;
}

export function startFakeModelServer(options: FakeOptions = {}): Promise<FakeModelServer> {
  const stats = new Map<string, TagStats>();
  const cursors = new Map<string, number>();
  const limits = new RateLimits();
  const promptCache = new FakePromptCache();
  const gates = new Gates();
  const config = {
    latencyMs: options.latencyMs ?? 0,
    rateLimitFraction: options.rateLimitFraction ?? 0,
    proseFraction: options.proseFraction ?? 0,
    batchDelayMs: options.batchDelayMs ?? 300,
  };

  const statsFor = (tag: string): TagStats => {
    let s = stats.get(tag);
    if (!s) {
      s = {
        requests: 0,
        rate_limited: 0,
        compactions: 0,
        summaries_seen: 0,
        tool_results: [],
        tools_offered: [],
        in_flight: 0,
        held: 0,
        max_in_flight: 0,
        throttled: 0,
        served_max_in_flight: 0,
        auth: [],
        prompts: [],
        times: [],
        models: [],
        batched: 0,
      };
      stats.set(tag, s);
    }
    return s;
  };

  const outages = new FakeOutages();

  function nextStep(tag: string, id: string, all: string[], prompt: string, model: string, tier: string | null): string {
    // Steps for one model only (`MODEL~STEP`; `MODEL@TIER~STEP` for its calls on that OpenAI tier):
    // each model (and each tier a step names) goes through its own, with its own counter.
    const byModel = all.some((step) => MODEL_STEP.test(step));
    const byTier = all.some((step) => MODEL_STEP.exec(step)?.[2] !== undefined);
    const steps = byModel
      ? all.flatMap((step) => {
          const m = MODEL_STEP.exec(step);
          if (!m) return [step];
          return m[1] === model && (m[2] === undefined || m[2] === tier) ? [m[3] as string] : [];
        })
      : all;
    const key = `${tag}\u0000${id}${byModel ? `\u0000${model}` : ""}${byTier ? `@${tier}` : ""}`;
    const i = cursors.get(key) ?? 0;
    cursors.set(key, i + 1);
    if (steps.length > 0 && !(steps.length === 1 && steps[0] === "ok")) return steps[Math.min(i, steps.length - 1)] ?? "ok";
    // Un-scripted calls: the configured fault fractions apply to the first call of a prompt.
    if (i === 0 && hashFraction(prompt, "429") < config.rateLimitFraction) return "429:1";
    if (i === 0 && hashFraction(prompt, "prose") < config.proseFraction) return "prose";
    return "ok";
  }

  /** What the fake answers one request: through the HTTP API (`live`: its rate limits, gates, capacity and latency apply) or as a line of a batch. */
  async function answerRequest(format: Format, body: Json, key: string, auth: string, live: boolean): Promise<Answered> {
    // An embeddings request (`input`, no messages: ./embeddings.ts) goes through the same steps, then answers its vector.
    const embedding = typeof body.input === "string" && body.messages === undefined;
    const prompt = embedding ? String(body.input) : lastUserText(body.messages);
    // The directive may sit in any message (an agent's first prompt, not its latest turn).
    const all = embedding ? prompt : Array.isArray(body.messages) ? (body.messages as Json[]).map(messageText).join("\n") : "";
    const directive = parseDirective(all);
    const compaction = prompt.includes(SUMMARY_REQUEST);
    const tag = directive?.tag ?? "default";
    const s = statsFor(tag);
    s.requests++;
    s.in_flight++;
    s.max_in_flight = Math.max(s.max_in_flight, s.in_flight);
    s.auth.push(auth);
    if (s.prompts.length < MAX_PROMPTS_KEPT) s.prompts.push(prompt);
    s.times.push(Date.now());
    if (s.models.length < MAX_PROMPTS_KEPT) s.models.push(String(body.model));
    if (!live) s.batched++;
    if (compaction) s.compactions++;
    if (all.includes("Summary of the earlier conversation")) s.summaries_seen++;
    else {
      s.tool_results = toolResults(body.messages); // the conversation so far, as this request shows it
      s.tools_offered.push(toolNames(body));
    }
    // The prompt as the fake counts it: the system text (Anthropic's field, OpenAI's system message) and the last user message.
    const system = format === "anthropic" ? systemText(body.system) : openAiSystem(body.messages);
    const counted = system + prompt;
    // The key's rate limits (POST /_fake/limits), charged as each provider charges them; batches have their own queue.
    const maxTokens = Number(body.max_tokens ?? body.max_completion_tokens ?? 0);
    const admission = live ? limits.admit(key, String(body.model), estimateTokens(counted), Number.isFinite(maxTokens) ? maxTokens : 0) : null;
    const rateHeaders = admission?.headers() ?? {};
    try {
      const refusal = format === "openai" ? logprobsRefusal(body) : null;
      if (refusal) return { status: 400, headers: rateHeaders, json: refusal };
      if (admission && !admission.ok) {
        s.rate_limited++;
        return {
          status: 429,
          headers: rateHeaders,
          json:
            format === "openai"
              ? { error: { message: "Rate limit reached (fake)", type: "requests", param: null, code: "rate_limit_exceeded" } }
              : { type: "error", error: { type: "rate_limit_error", message: "Rate limit reached (fake)" } },
        };
      }
      if (live && directive && directive.cap !== null && s.in_flight > directive.cap) {
        s.throttled++;
        return {
          status: 429,
          headers: { "retry-after": "1" },
          json: { error: { type: "rate_limit_error", message: "fake capacity exceeded" }, type: "error" },
        };
      }
      if (live && outages.down(String(body.model), key)) return outageAnswer(format);
      s.served_max_in_flight = Math.max(s.served_max_in_flight, s.in_flight);
      if (live && directive?.gate != null) await gates.pass(tag, directive.gate);
      // A compaction request answers with a summary and does not consume the item's script.
      const step = compaction
        ? "text:SUMMARY_OF_EARLIER_TURNS"
        : nextStep(tag, directive?.id ?? prompt, directive?.steps ?? ["ok"], prompt, String(body.model), format === "openai" ? servedTier(body) : null);
      const answer: StepAnswer = answerFor(step, prompt, directive?.id, requestedSchema(body));
      if (live) await sleep((directive?.ms ?? config.latencyMs) + answer.delayMs);
      if (answer.kind === "error") {
        const headers: Record<string, string> = { ...rateHeaders };
        if (answer.retryAfter !== null) headers["retry-after"] = String(answer.retryAfter);
        if (answer.quota) {
          // OpenAI's answer for a spent quota, field for field (Anthropic says so with a 400 instead: not scripted here).
          const message =
            "You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.";
          return { status: 429, headers, json: { error: { message, type: "insufficient_quota", param: null, code: "insufficient_quota" } } };
        }
        const model = String(body.model);
        if (answer.code === "model_not_found") {
          // As each provider words it: OpenAI's 404 with code model_not_found; Anthropic's not_found_error naming the model.
          return format === "openai"
            ? {
                status: 404,
                headers,
                json: {
                  error: {
                    message: `The model \`${model}\` does not exist or you do not have access to it.`,
                    type: "invalid_request_error",
                    param: null,
                    code: "model_not_found",
                  },
                },
              }
            : { status: 404, headers, json: { type: "error", error: { type: "not_found_error", message: `model: ${model}` } } };
        }
        if (answer.code === "resource_unavailable") {
          // OpenAI's answer when it has no capacity for the request (the flex tier's): a 429 that is not a rate limit.
          const message = "Resource temporarily unavailable: the request could not be served at this time. Please retry later or use the default service tier.";
          return { status: 429, headers, json: { error: { message, type: "invalid_request_error", param: null, code: "resource_unavailable" } } };
        }
        const type =
          answer.status === 429 ? "rate_limit_error" : answer.status === 529 ? "overloaded_error" : answer.status < 500 ? "invalid_request_error" : "api_error";
        return { status: answer.status, headers, json: { error: { type, message: `fake ${answer.status}` }, type: "error" } };
      }
      if (answer.kind === "expire") return { status: 0, headers: {}, expired: true };
      if (embedding) return { status: 200, headers: rateHeaders, json: embeddingBody(body, prompt) };
      let reply: Reply;
      let probability: number | null = null;
      if (answer.kind === "json") {
        const scripted = takeProbability(answer.value); // a scripted `_p`: the probability its logprobs give its value
        probability = scripted.p;
        reply = { text: JSON.stringify(scripted.value), json: scripted.value };
      } else if (answer.kind === "tool") reply = { text: "", json: null, toolCall: { id: `call_${s.requests}`, name: answer.name, args: answer.args } };
      else reply = { text: answer.text, json: null, finish: answer.finish };
      admission?.settle(estimateTokens(reply.text) + (reply.toolCall ? 10 : 0));
      const cache = format === "openai" ? promptCache.openai(key, counted) : promptCache.anthropic(key, body);
      const count = { tokens: estimateTokens(counted), ...cache };
      if (live && body.stream === true) {
        return { status: 200, headers: rateHeaders, sse: format === "openai" ? openAiStream(body, count, reply) : anthropicStream(body, count, reply) };
      }
      return {
        status: 200,
        headers: rateHeaders,
        json: format === "openai" ? openAiBody(body, count, reply, logprobsOf(body, reply.text, probability)) : anthropicBody(body, count, reply),
      };
    } finally {
      s.in_flight--;
    }
  }

  async function handleModel(req: IncomingMessage, res: ServerResponse, format: Format): Promise<void> {
    const body = JSON.parse(await readBody(req)) as Json;
    const a = await answerRequest(format, body, apiKeyOf(req), String(req.headers.authorization ?? req.headers["x-api-key"] ?? ""), true);
    if (a.sse !== undefined) {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", ...a.headers });
      res.end(a.sse);
      return;
    }
    res.writeHead(a.status || 500, { "content-type": "application/json", ...a.headers });
    res.end(JSON.stringify(a.json ?? { error: { type: "api_error", message: "expire is a batch line's step" } }));
  }

  function handleControl(req: IncomingMessage, res: ServerResponse, url: URL): void {
    const tag = url.searchParams.get("tag") ?? "default";
    if (url.pathname === "/_fake/stats") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ ...statsFor(tag), held: gates.held(tag) }));
    } else if (url.pathname === "/_fake/gates" && req.method === "POST") {
      gates.open(tag);
      res.writeHead(204).end();
    } else if (url.pathname.startsWith("/_demo/tools/") && req.method === "POST") {
      // The offline demo's HTTP tool (README: the agentic example): it answers what it was asked.
      const name = url.pathname.slice("/_demo/tools/".length);
      void readBody(req).then((text) => {
        res.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
        res.end(`${name}: demo answer for ${text || "{}"}`);
      });
    } else if (url.pathname === "/_fake/limits" && req.method === "POST") {
      // {"key": the API key, "limits": LimitConfig or null, "model"?: one model's}: that key's rate limits from now on (each model's windows apart).
      void readBody(req).then((text) => {
        const { key, limits: config, model } = JSON.parse(text) as { key: string; limits: LimitConfig | null; model?: string };
        limits.set(key, config, model ?? null);
        res.writeHead(204).end();
      });
    } else if (url.pathname === "/_fake/config" && req.method === "POST") {
      void readBody(req).then((text) => {
        Object.assign(config, JSON.parse(text || "{}") as Partial<typeof config>);
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(config));
      });
    } else {
      res.writeHead(404).end();
    }
  }

  const batches = new FakeBatches(
    (format, body, key, auth) => answerRequest(format, body, key, auth, false),
    () => config.batchDelayMs,
    (tag) => gates.isOpen(tag),
  );

  const listing = new FakeModelListing();
  const collector = new FakeCollector();

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://fake");
    const auth = String(req.headers.authorization ?? req.headers["x-api-key"] ?? "");
    if (batches.handle(req, res, url, () => readRaw(req), apiKeyOf(req), auth)) return;
    if (listing.handle(req, res, url, apiKeyOf(req), () => readBody(req))) return;
    if (collector.handle(req, res, url, () => readBody(req))) return;
    if (outages.handle(req, res, url, () => readBody(req))) return;
    if (req.method === "POST" && (url.pathname.endsWith("/chat/completions") || url.pathname.endsWith("/embeddings"))) {
      handleModel(req, res, "openai").catch((err: unknown) => res.writeHead(500).end(String(err)));
    } else if (req.method === "POST" && url.pathname.endsWith("/messages")) {
      handleModel(req, res, "anthropic").catch((err: unknown) => res.writeHead(500).end(String(err)));
    } else if (url.pathname === "/healthz") {
      res.writeHead(200).end("ok");
    } else {
      handleControl(req, res, url);
    }
  });
  server.keepAliveTimeout = 60_000;
  return new Promise((resolve, reject) => {
    server.once("error", reject); // a port in use: the caller may try another
    server.listen(options.port ?? 0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      resolve({
        url: `http://127.0.0.1:${port}`,
        port,
        server,
        close: () =>
          new Promise<void>((r) => {
            server.closeAllConnections();
            server.close(() => r());
          }),
      });
    });
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = (name: string) => {
    const i = process.argv.indexOf(name);
    return i > 0 ? process.argv[i + 1] : undefined;
  };
  const fake = await startFakeModelServer({ port: Number(arg("--port") ?? 8790), latencyMs: Number(arg("--latency-ms") ?? 200) });
  console.log(`fake model server on ${fake.url} (OpenAI: ${fake.url}/v1, Anthropic: ${fake.url})`);
}
