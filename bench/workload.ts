/** The benchmark workload, shared by Fanout and both baselines: same items, template, schema, validation. */
import { extractJson } from "../src/output/extract-json.ts";
import { compileOutputSchema } from "../src/output/validate.ts";
import { compileTemplate } from "../src/template/jinja.ts";

export interface Workload {
  n: number;
  concurrency: number;
  latencyMs: number;
  tag: string;
  cap?: number; // the provider's capacity (calls in flight) for this workload's tag
  maxRetries?: number; // Fanout's max_retries (the baselines keep their SDK's defaults)
  jitterMs?: number; // each item's latency spread over latencyMs ± jitterMs, evenly and the same every run (mean L)
  provider?: "openai" | "openai-compatible"; // Fanout's model's provider (default openai; openai-compatible: a server without rate-limit headers, on the tenant's own key)
}

/** Item i's latency: L, or with jitter a fixed spread over L ± jitter (a provider's answers do not all take the same time). */
function latencyOf(w: Workload, i: number): number {
  if (!w.jitterMs) return w.latencyMs;
  const spread = ((i * 7919) % 1001) / 1000; // 0..1, evenly over the items
  return Math.max(1, Math.round(w.latencyMs + (2 * spread - 1) * w.jitterMs));
}

export const TEMPLATE =
  "Summarize this document: {{ item.text }} <<fake tag={{ item.tag }} id={{ item.id }} ms={{ item.ms }}{% if item.cap %} cap={{ item.cap }}{% endif %}>>";

export const SCHEMA = {
  type: "object",
  properties: { echo: { type: "string" }, length: { type: "integer" } },
  required: ["echo", "length"],
};

export const MODEL = "bench-model";

export function items(w: Workload, prefix = "") {
  return Array.from({ length: w.n }, (_, i) => ({
    id: `${prefix}${i}`,
    text: `document number ${prefix}${i}`,
    tag: w.tag,
    ms: latencyOf(w, i),
    cap: w.cap ?? null,
  }));
}

const template = compileTemplate(TEMPLATE);
const validator = compileOutputSchema(SCHEMA);

export const renderPrompt = (item: unknown): string => template.render(item);

/** The output if the text is valid for the schema, else null (the same check Fanout applies). */
export function validOutput(text: string): unknown {
  const parsed = extractJson(text);
  return parsed.ok && validator.validate(parsed.value).length === 0 ? parsed.value : null;
}

/** What every runner prints (one JSON line) and the driver tabulates. */
export interface RunFigures {
  wallMs: number;
  firstResultMs: number | null;
  recorded: number; // items with a result or an error on record
  succeeded: number; // items with a valid output
}
