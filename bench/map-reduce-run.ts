/**
 * S7, the corpus orchestrator: POST /v1/map-reduce over N documents, `docs_per_mapper` D, P
 * mappers in parallel, every model call taking L (fake latency), mapper answers spread over K
 * categories, then hierarchical (fan_in F), flat or category reduce, and synthesis. The ideal is
 * the critical path: ceil(N/D/P)·L for the map, one L per reduce level, one L for synthesis.
 * Also times the shuffle of 100,000 synthetic extractions (the pure function, in this process).
 */
import { call, openEvents, readSse } from "../test/e2e/harness/api.ts";
import { shuffle, type MapperOutput } from "../src/operators/map-reduce/shuffle.ts";
import { levels, type Strategy } from "../src/operators/map-reduce/levels.ts";

export interface CorpusWorkload {
  n: number;
  perMapper: number;
  mappers: number;
  latencyMs: number;
  categories: number;
  fanIn: number;
  strategy: Strategy;
  tag: string;
}

const SCHEMA = { type: "object", properties: { echo: { type: "string" }, length: { type: "integer" } }, required: ["echo", "length"] };

function documents(w: CorpusWorkload): string[] {
  return Array.from({ length: w.n }, (_, i) => {
    if (i % w.perMapper !== 0) return `document ${i}`;
    const b = i / w.perMapper;
    const extractions = Array.from({ length: 3 }, (_, k) => ({ category: `c${(b * 3 + k) % w.categories}`, claim: `claim ${b}.${k}` }));
    return `document ${i} <<fake tag=${w.tag} id=m${b} steps=json:${encodeURIComponent(JSON.stringify(extractions))} ms=${w.latencyMs}>>`;
  });
}

export function idealMs(w: CorpusWorkload): number {
  const batches = Math.ceil(w.n / w.perMapper);
  const levelCount = levels(w.strategy, w.categories, w.fanIn).sizes.length;
  return Math.ceil(batches / w.mappers) * w.latencyMs + levelCount * w.latencyMs + w.latencyMs;
}

export async function runCorpus(base: string, key: string, w: CorpusWorkload) {
  const body = {
    inputs: documents(w),
    model: "openai/gpt-6-luna",
    mapper: { prompt_template: "{% for d in items %}{{ d }}\n{% endfor %}" },
    docs_per_mapper: w.perMapper,
    max_parallel_mappers: w.mappers,
    reducer: { prompt_template: `{{ key }} {{ level }} {{ items | length }} <<fake tag=${w.tag}-r ms=${w.latencyMs}>>`, output_schema: SCHEMA },
    reduction_strategy: w.strategy,
    fan_in: w.fanIn,
    synthesis: { prompt_template: `{{ results | tojson }} <<fake tag=${w.tag}-s ms=${w.latencyMs}>>`, output_schema: SCHEMA },
  };
  const started = performance.now();
  const created = await call(base, "POST", "/v1/map-reduce", { token: key, body });
  if (created.status !== 202) throw new Error(`POST /v1/map-reduce: ${created.status} ${JSON.stringify(created.body)}`);
  const events = await readSse(await openEvents(base, key, created.body.job_id));
  const wallMs = performance.now() - started;
  const end = events.at(-1);
  if (end?.event !== "MAP_COMPLETED" || end.data.status !== "completed") throw new Error(`the job did not complete: ${JSON.stringify(end)}`);
  const job = (await call(base, "GET", `/v1/jobs/${created.body.job_id}`, { token: key })).body;
  return { wallMs, calls: job.total_attempts as number, tokens: (job.usage.input_tokens + job.usage.output_tokens) as number };
}

/** The shuffle of 100,000 extractions (10,000 batches × 10, 20 categories, dedupe on a field). */
export function timeShuffle(): number {
  const outputs: MapperOutput[] = Array.from({ length: 10_000 }, (_, b) => ({
    documents: [b],
    extractions: Array.from({ length: 10 }, (_, i) => ({ category: `c${(b + i) % 20}`, name: `n${(b * 10 + i) % 30_000}`, confidence: i / 10 })),
  }));
  const started = performance.now();
  shuffle(outputs, { key: "category", dedupe: "exact", dedupeFields: ["name"], conflict: "highest_confidence" });
  return performance.now() - started;
}
