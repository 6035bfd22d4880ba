/**
 * `npm run bench:cascade` — S15, cascades with a guarantee (#50).
 *
 * Part 1, the guarantee (in process, the operator's own procedure: src/engine/cascade-target.ts):
 * for each of CASCADE_SEEDS (default 40) seeds, a population of 10,000 filter items — the oracle
 * keeps ~40 %; the cheaper model states a certainty c ~ U(0.5, 1) and is right with probability c
 * (its accuracy varies with its confidence), or, overconfident, with c − 0.3 — a seeded sample of 200 answered by the oracle, the
 * thresholds learned for each target at confidence 0.95. For each target: the share of runs whose
 * final answers meet it against the oracle on all 10,000 items (the guarantee says ≥ 0.95), how
 * often the cascade was used (met), and the oracle calls saved (the sample counted as spent).
 * Beside it, on the same data: the naive fixed thresholds (accept 0.9, reject 0.1) and the best
 * fixed pair in hindsight (the most saving pair that meets the target on the population itself —
 * knowable only after paying for every oracle answer).
 *
 * Part 2 (CASCADE_E2E=1, default on): one such job of CASCADE_ITEMS (default 10,000) items
 * through `wrangler dev` and the fake model, answers scripted per model: the thresholds the job
 * learned beside those the procedure learns in process from the same seed, its calls, its wall
 * time, and its dollars at list prices (gpt-6-luna cheaper, gpt-6-sol oracle) beside the oracle alone.
 */
import { decide, drawSample, learnThresholds, type SamplePoint, type TargetMetric, type Thresholds } from "../src/engine/cascade-target.ts";
import { seeded } from "../src/lib/seeded.ts";
import { priceOf } from "../src/llm/prices.ts";

const SEEDS = Number(process.env.CASCADE_SEEDS ?? 40);
const N = 10_000;
const SAMPLE = 200;
const TARGETS: [TargetMetric, number][] = [
  ["accuracy", 0.9],
  ["accuracy", 0.95],
  ["precision", 0.9],
  ["precision", 0.95],
];

type Item = { oracleKeep: boolean; score: number };

/** `overconfidence`: how much less often than it says the cheaper model is right (0: calibrated). */
function population(seed: number, n = N, overconfidence = 0): Item[] {
  const random = seeded(seed);
  return Array.from({ length: n }, () => {
    const oracleKeep = random() < 0.4;
    const c = 0.5 + random() / 2;
    const saysKeep = random() < Math.max(0.5, c - overconfidence) ? oracleKeep : !oracleKeep;
    return { oracleKeep, score: saysKeep ? c : 1 - c };
  });
}

/** The metric the final answers reach against the oracle, and the oracle calls made (sampled items are the oracle's). */
function outcome(metric: TargetMetric, t: Thresholds, pop: Item[], sampled: Set<number>): { value: number; oracle: number } {
  let s = 0;
  let n = 0;
  let oracle = 0;
  pop.forEach((p, i) => {
    const d = sampled.has(i) ? "oracle" : decide(t, p.score);
    if (d === "oracle") oracle++;
    const kept = d === "oracle" ? p.oracleKeep : d === "accept";
    if (metric === "accuracy" || (metric === "precision" && kept)) {
      n++;
      if (metric === "accuracy" ? kept === p.oracleKeep : p.oracleKeep) s++;
    }
  });
  return { value: n === 0 ? 1 : s / n, oracle };
}

/** The most saving fixed pair that meets the target on the whole population (hindsight: every oracle answer known). */
function bestInHindsight(metric: TargetMetric, value: number, pop: Item[]): Thresholds {
  let best: { t: Thresholds; oracle: number } = { t: { acceptAbove: null, rejectBelow: null }, oracle: pop.length };
  for (let a = 50; a <= 100; a++) {
    for (let r = -1; r < Math.min(a, 50); r++) {
      const t = { acceptAbove: a / 100, rejectBelow: r < 0 ? null : r / 100 };
      const o = outcome(metric, t, pop, new Set());
      if (o.value >= value && o.oracle < best.oracle) best = { t, oracle: o.oracle };
    }
  }
  return best.t;
}

const pct = (x: number) => `${(100 * x).toFixed(1)} %`;

function part1(overconfidence: number): string[] {
  const who = overconfidence === 0 ? "calibrated cheaper model" : `cheaper model right ${overconfidence * 100} points less often than it says`;
  const lines = [
    `| ${who}: target (confidence 0.95, sample 200) | runs meeting it | cascade used | oracle calls saved | naive 0.9/0.1: meeting, saved | best fixed in hindsight: saved |`,
    "|---|---|---|---|---|---|",
  ];
  for (const [metric, value] of TARGETS) {
    let meets = 0;
    let used = 0;
    let saved = 0;
    let naiveMeets = 0;
    let naiveSaved = 0;
    let bestSaved = 0;
    for (let seed = 1; seed <= SEEDS; seed++) {
      const pop = population(seed, N, overconfidence);
      const sampled = new Set(drawSample(N, SAMPLE, seed));
      const points: SamplePoint[] = [...sampled].map((i) => ({ kind: "binary", score: pop[i]?.score ?? null, oracleKeep: pop[i]?.oracleKeep ?? false }));
      const others = pop.filter((_, i) => !sampled.has(i)).map((p) => p.score);
      const learned = learnThresholds({ metric, value, confidence: 0.95 }, points, others);
      const o = outcome(metric, learned, pop, sampled);
      if (o.value >= value) meets++;
      if (learned.met) used++;
      saved += 1 - o.oracle / N;
      const naive = outcome(metric, { acceptAbove: 0.9, rejectBelow: 0.1 }, pop, new Set());
      if (naive.value >= value) naiveMeets++;
      naiveSaved += 1 - naive.oracle / N;
      bestSaved += 1 - outcome(metric, bestInHindsight(metric, value, pop), pop, new Set()).oracle / N;
    }
    lines.push(
      `| ${metric} ≥ ${value} | ${meets}/${SEEDS} (${pct(meets / SEEDS)}) | ${used}/${SEEDS} | ${pct(saved / SEEDS)} | ${naiveMeets}/${SEEDS}, ${pct(naiveSaved / SEEDS)} | ${pct(bestSaved / SEEDS)} |`,
    );
    console.log(lines.at(-1));
  }
  return lines;
}

async function part2(): Promise<string[]> {
  const { call, newTenant, waitForJob } = await import("../test/e2e/harness/api.ts");
  const { startFanout } = await import("../test/e2e/harness/fanout-server.ts");
  const { startFakeModelServer } = await import("../test/fake-model/server.ts");
  const items = Number(process.env.CASCADE_ITEMS ?? N);
  const fake = await startFakeModelServer({ latencyMs: 0 });
  const fanout = await startFanout({
    vars: { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: "sk-bench-cascade", MAX_ITEMS_PER_JOB: "10000", MAX_REQUEST_BYTES: String(16 * 1024 * 1024) },
  });
  try {
    const { key } = await newTenant(fanout.url);
    const tag = `s15-${Date.now()}`;
    const pop = population(1, items);
    const json = (model: string, v: unknown) => `${model}~json:${encodeURIComponent(JSON.stringify(v))}`;
    const inputs = pop.map((p, i) => {
      const keep = p.score >= 0.5;
      const cheap = { keep, confidence: keep ? p.score : 1 - p.score, reason: "r" };
      return `paper ${i} <<fake tag=${tag} id=${i} steps=${json("gpt-6-luna", cheap)},${json("gpt-6-sol", { keep: p.oracleKeep, reason: "r" })}>>`;
    });
    const target = { metric: "accuracy" as const, value: 0.9 };
    const body = {
      inputs,
      predicate_template: "Keep? {{ item }}",
      model: "openai/gpt-6-sol",
      concurrency: 32,
      max_retries: 0,
      cascade: { model: "openai/gpt-6-luna", target, sample: { size: SAMPLE }, seed: 1, score: "self_reported" },
    };
    const started = performance.now();
    const created = await call(fanout.url, "POST", "/v1/filter", { token: key, body });
    if (created.status !== 202) throw new Error(`${created.status} ${JSON.stringify(created.body).slice(0, 300)}`);
    const job = await waitForJob(fanout.url, key, created.body.job_id, 3_600_000);
    const secs = (performance.now() - started) / 1000;
    const sampled = new Set(drawSample(items, SAMPLE, 1));
    const inProcess = learnThresholds(
      { ...target, confidence: 0.95 },
      [...sampled].map((i) => ({ kind: "binary" as const, score: pop[i]?.score ?? null, oracleKeep: pop[i]?.oracleKeep ?? false })),
      pop.filter((_, i) => !sampled.has(i)).map((p) => p.score),
    );
    const c = job.output.cascade;
    const stage = (name: string) => (job.stages as { name: string; cost_usd: number | null }[]).find((s) => s.name === name)?.cost_usd ?? 0;
    const oracleAlone = (job.stages as { name: string; usage: { input_tokens: number; output_tokens: number } }[]).find((s) => s.name === "sample");
    const sol = priceOf({}, "openai/gpt-6-sol");
    const perOracleCall = oracleAlone && sol ? (oracleAlone.usage.input_tokens * sol.input + oracleAlone.usage.output_tokens * sol.output) / 1e6 / SAMPLE : 0;
    return [
      `- one job of ${items.toLocaleString("en-US")} items, accuracy ≥ 0.9 at 0.95, sample 200, seed 1: ${job.status} in ${secs.toFixed(1)} s; learned accept ${c.accept_above}, reject ${c.reject_below} (in process: ${inProcess.acceptAbove}, ${inProcess.rejectBelow}); estimate ${JSON.stringify(c.estimate)}; decided ${JSON.stringify(job.output.decided_by)}; oracle calls ${c.oracle_calls.toLocaleString("en-US")} of ${items.toLocaleString("en-US")}`,
      `- dollars at list prices: cheaper stage $${stage("cascade").toFixed(4)} + sample $${stage("sample").toFixed(4)} + items $${stage("items").toFixed(4)} = $${(stage("cascade") + stage("sample") + stage("items")).toFixed(4)}; the oracle alone on every item ≈ $${(perOracleCall * items).toFixed(4)}`,
    ];
  } finally {
    if (process.env.CASCADE_LOGS)
      console.log(
        fanout
          .logs()
          .split("\n")
          .filter((l) => l.includes("TIMING"))
          .join("\n"),
      );
    await fanout.stop();
    await fake.close();
  }
}

const out = [`S15 (${new Date().toISOString().slice(0, 10)}, ${SEEDS} seeds, ${N.toLocaleString("en-US")} items each)`, ...part1(0), "", ...part1(0.3)];
if (process.env.CASCADE_E2E !== "0") out.push(...(await part2()));
console.log(out.join("\n"));
