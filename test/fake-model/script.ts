/**
 * The fake model's script language. A prompt may carry a directive
 *   <<fake tag=T id=I steps=429:2,prose,ok ms=200 cap=8 gate=12>>
 * `tag` groups counters (one per test), `id` names an item, `steps` are consumed one per call of
 * that (tag, id) — the last one repeats — `ms` is the latency of each call, and `cap` the
 * provider's capacity for the tag: a call past `cap` in flight is answered 429 with Retry-After 1
 * at once, without consuming a step (counted as `throttled`). `gate` lets the tag's first calls
 * through and holds the later ones until the test opens it (./gates.ts).
 * Steps: ok, fence, prose, prose-json, bad, 429[:retry-after-secs], 500, 529, 401, 400, slow[:ms],
 * quota[:retry-after-secs] (OpenAI's 429 for a spent quota: `type` and `code` `insufficient_quota`),
 * gone (the model is unknown or retired: OpenAI's 404 `model_not_found`, Anthropic's 404
 * `not_found_error` "model: …"), busy (OpenAI's 429 `resource_unavailable`: no capacity, as the flex tier says it),
 * and for agents: call:NAME[:ARG] (a tool call with arguments {"q": ARG or the item id}),
 * text:SOME_WORDS (a plain answer, underscores read as spaces), length (cut off at max_tokens),
 * json:URI_ENCODED_JSON (exactly that JSON value: a mapper's extractions, say),
 * tool:NAME:URI_ENCODED_JSON (a call of the tool NAME with exactly those arguments),
 * spawn:URI_ENCODED_JSON (a spawn_subtask tool call with those arguments), respawn (a spawn_subtask
 * call asking for what this child session was asked: its description and inputs), expire (a
 * batch line its batch never processed: the batch ends `expired` with the line in its error file,
 * OpenAI, or as an `expired` result, Anthropic). Provider batches also read `batch_ms=` and
 * `on_cancel=ok` (./batches.ts). A step `MODEL~STEP` is for that model only (the request's `model`):
 * when any step names a model, each model goes through the steps for it (and the unnamed ones)
 * with a counter of its own — a cascade's cheaper model and the job's model scripted apart, in any
 * order of their calls. `MODEL@flex~STEP` (or `@default`) is for that model's calls on that
 * OpenAI service tier only (the request's `service_tier`), each tier then counted apart.
 */
export interface Directive {
  tag: string;
  id: string;
  steps: string[];
  ms: number | null;
  /** The provider's capacity for this tag: past `cap` calls in flight, a call is answered 429 (Retry-After 1) at once. */
  cap: number | null;
  /** How many calls of the tag go through before the rest wait for `POST /_fake/gates?tag=T`. */
  gate: number | null;
}

const DIRECTIVE = /<<fake([^>]*)>>/;

export function parseDirective(text: string): Directive | null {
  const match = text.match(DIRECTIVE);
  if (!match) return null;
  const fields = new Map<string, string>();
  for (const pair of (match[1] ?? "").trim().split(/\s+/)) {
    const eq = pair.indexOf("=");
    if (eq > 0) fields.set(pair.slice(0, eq), pair.slice(eq + 1));
  }
  const ms = fields.get("ms");
  const cap = fields.get("cap");
  const gate = fields.get("gate");
  return {
    tag: fields.get("tag") ?? "default",
    id: fields.get("id") ?? "0",
    steps: (fields.get("steps") ?? "ok").split(",").filter(Boolean),
    ms: ms === undefined ? null : Number(ms),
    cap: cap === undefined ? null : Number(cap),
    gate: gate === undefined ? null : Number(gate),
  };
}

export function stripDirective(text: string): string {
  return text.replace(/<<fake[^>]*>>/g, "").trim();
}

/** The JSON a well-behaved model answers: it echoes the prompt so tests can check rendering. */
export function okObject(prompt: string): { echo: string; length: number } {
  const echo = stripDirective(prompt).split("\n\n")[0] ?? "";
  return { echo, length: echo.length };
}

type Schema = Record<string, unknown>;

/**
 * A value that satisfies `schema`, built from the prompt: strings are the echoed prompt, numbers
 * its length (within `minimum`/`maximum`), enums their first value, arrays one element. This is how the fake honours a requested JSON Schema.
 */
export function synthesize(schema: Schema | null | undefined, prompt: string): unknown {
  const base = okObject(prompt);
  if (!schema) return base;
  const build = (s: Schema): unknown => {
    if (Array.isArray(s.enum)) return s.enum[0];
    if ("const" in s) return s.const;
    const type = Array.isArray(s.type) ? s.type[0] : s.type;
    switch (type) {
      case "object": {
        const props = (s.properties ?? {}) as Record<string, Schema>;
        return Object.fromEntries(Object.entries(props).map(([k, v]) => [k, k === "echo" ? base.echo : build(v)]));
      }
      case "array":
        return [build((s.items ?? {}) as Schema)];
      case "integer":
      case "number": {
        // The prompt's length, within the schema's bounds (a confidence between 0 and 1: 1).
        const max = typeof s.maximum === "number" ? s.maximum : Infinity;
        const min = typeof s.minimum === "number" ? s.minimum : -Infinity;
        return Math.min(max, Math.max(min, base.length));
      }
      case "boolean":
        return true;
      case "null":
        return null;
      default:
        return base.echo;
    }
  };
  return build(schema);
}

export type StepAnswer =
  | { kind: "text"; text: string; delayMs: number; finish?: "length" }
  | { kind: "tool"; name: string; args: Record<string, unknown>; delayMs: number }
  | { kind: "json"; value: unknown; delayMs: number }
  | { kind: "error"; status: number; retryAfter: number | null; delayMs: number; quota?: boolean; code?: "model_not_found" | "resource_unavailable" }
  | { kind: "expire"; delayMs: number }; // a batch line the provider never processed before its batch expired

export function answerFor(step: string, prompt: string, id = "0", schema: Schema | null = null): StepAnswer {
  const [name, arg, extra] = step.split(":");
  if (name === "json") return { kind: "json", value: JSON.parse(decodeURIComponent(step.slice(5))) as unknown, delayMs: 0 };
  if (name === "respawn") {
    // A spawn_subtask call asking again for exactly what this (child) session was asked: its description and inputs.
    const [description, inputs] = prompt.split("\n\nInputs:\n");
    return { kind: "tool", name: "spawn_subtask", args: { description, inputs: inputs ? (JSON.parse(inputs) as unknown) : {} }, delayMs: 0 };
  }
  if (name === "tool") {
    const [, tool, encoded] = step.split(":");
    return { kind: "tool", name: tool ?? "tool", args: JSON.parse(decodeURIComponent(encoded ?? "%7B%7D")) as Record<string, unknown>, delayMs: 0 };
  }
  if (name === "spawn")
    return { kind: "tool", name: "spawn_subtask", args: JSON.parse(decodeURIComponent(step.slice(6))) as Record<string, unknown>, delayMs: 0 };
  const value = synthesize(schema, prompt);
  const json = JSON.stringify(value);
  switch (name) {
    case "fence":
      return { kind: "text", text: "```json\n" + json + "\n```", delayMs: 0 };
    case "prose":
      return { kind: "text", text: "I would rather describe this in words than in JSON.", delayMs: 0 };
    case "prose-json":
      return { kind: "text", text: `Sure! Here is the result: ${json} Hope this helps.`, delayMs: 0 };
    case "bad":
      return { kind: "json", value: { wrong: true }, delayMs: 0 };
    case "429":
      return { kind: "error", status: 429, retryAfter: arg === undefined ? null : Number(arg), delayMs: 0 };
    case "quota":
      return { kind: "error", status: 429, retryAfter: arg === undefined ? null : Number(arg), delayMs: 0, quota: true };
    case "gone":
      return { kind: "error", status: 404, retryAfter: null, delayMs: 0, code: "model_not_found" };
    case "busy":
      return { kind: "error", status: 429, retryAfter: null, delayMs: 0, code: "resource_unavailable" };
    case "500":
    case "529":
    case "401":
    case "400":
      return { kind: "error", status: Number(name), retryAfter: null, delayMs: 0 };
    case "expire":
      return { kind: "expire", delayMs: 0 };
    case "call":
      return { kind: "tool", name: arg ?? "tool", args: { q: extra ?? id }, delayMs: 0 };
    case "text":
      return { kind: "text", text: (arg ?? "").replaceAll("_", " "), delayMs: 0 };
    case "length":
      return { kind: "text", text: "This answer was cut off because it ran into the", delayMs: 0, finish: "length" };
    case "slow":
      return { kind: "json", value, delayMs: arg === undefined ? 5_000 : Number(arg) };
    default:
      return { kind: "json", value, delayMs: 0 };
  }
}
