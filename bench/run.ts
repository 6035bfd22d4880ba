/**
 * `npm run bench [-- --only S2,S3]`: Fanout against a hand-written p-limit + openai loop
 * (baseline A) and LangChain's ChatOpenAI.batch (baseline B) on the same workloads, against the
 * fake model server (fixed latency L). Prints a table and writes it into BENCHMARKS.md.
 */
import { spawn } from "node:child_process";
import { cpus, totalmem } from "node:os";
import { readFileSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { startFakeModelServer } from "../test/fake-model/server.ts";
import { startFanout, ROOT } from "../test/e2e/harness/fanout-server.ts";
import { allResults, call, newTenant } from "../test/e2e/harness/api.ts";
import { followJob, mapBody, runThroughFanout, startJob } from "./fanout-run.ts";
import { samplePeak } from "./memory.ts";
import { runFold } from "./reduce-run.ts";
import { idealMs, runCorpus, timeShuffle } from "./map-reduce-run.ts";
import { pipelineIdealMs, runPipeline } from "./pipeline-run.ts";
import type { RunFigures, Workload } from "./workload.ts";

interface Row {
  scenario: string;
  runner: string;
  w: Workload;
  figures: RunFigures;
  attempts: number;
  peakMb: number;
  note?: string;
}

const only = (() => {
  const i = process.argv.indexOf("--only");
  return i > 0 ? new Set((process.argv[i + 1] ?? "").split(",")) : null;
})();

let fanoutKey: string;
const rows: Row[] = [];

async function fakeConfig(config: { rateLimitFraction: number; proseFraction: number }): Promise<void> {
  await fetch(`${fake.url}/_fake/config`, { method: "POST", body: JSON.stringify(config) });
}

async function requestsFor(tag: string): Promise<number> {
  return ((await (await fetch(`${fake.url}/_fake/stats?tag=${tag}`)).json()) as { requests: number }).requests;
}

function runChild(script: string, w: Workload): Promise<{ figures: RunFigures; peakMb: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--max-old-space-size=4096", "--import", "tsx", script, JSON.stringify(w), `${fake.url}/v1`], { cwd: ROOT });
    const sampler = samplePeak(() => child.pid);
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.on("exit", (code) => {
      const peakMb = sampler.stop();
      const line = out.trim().split("\n").at(-1);
      if (code !== 0 || !line) return reject(new Error(`${script} exited ${code}: ${err.slice(-2000)}`));
      resolve({ figures: JSON.parse(line) as RunFigures, peakMb });
    });
  });
}

async function runAll(scenario: string, base: Omit<Workload, "tag">, runners: ("fanout" | "a" | "b")[]): Promise<void> {
  if (only && !only.has(scenario)) return;
  for (const runner of runners) {
    const w = { ...base, tag: `${scenario}-${runner}-${Date.now()}` };
    process.stderr.write(`${scenario} ${runner}: N=${w.n} C=${w.concurrency} L=${w.latencyMs} ms … `);
    if (runner === "fanout") {
      const sampler = samplePeak(() => fanout.process.pid);
      const figures = await runThroughFanout(fanout.url, fanoutKey, w);
      rows.push({ scenario, runner: "Fanout", w, figures, attempts: await requestsFor(w.tag), peakMb: sampler.stop() });
    } else {
      const script = runner === "a" ? "bench/baseline-a.ts" : "bench/baseline-b.ts";
      const { figures, peakMb } = await runChild(script, w);
      rows.push({ scenario, runner: runner === "a" ? "A: p-limit + openai" : "B: LangChain batch", w, figures, attempts: await requestsFor(w.tag), peakMb });
    }
    process.stderr.write(`${((rows.at(-1) as Row).figures.wallMs / 1000).toFixed(2)} s\n`);
  }
}

/** S5: 10 jobs at once from 3 tenants; every result must belong to its own job. */
async function runConcurrentTenants(): Promise<void> {
  if (only && !only.has("S5")) return;
  const w = { n: 500, concurrency: 20, latencyMs: 300, tag: `S5-${Date.now()}` };
  const tenants = await Promise.all([0, 1, 2].map(() => newTenant(fanout.url)));
  const sampler = samplePeak(() => fanout.process.pid);
  const started = performance.now();
  process.stderr.write("S5: 10 jobs × 500 items from 3 tenants … ");
  const jobs = await Promise.all(
    Array.from({ length: 10 }, async (_, j) => {
      const tenant = tenants[j % 3] as { key: string };
      const prefix = `t${j % 3}-j${j}-`;
      const jobId = await startJob(fanout.url, tenant.key, mapBody(w, prefix));
      const followed = await followJob(fanout.url, tenant.key, jobId, started);
      const results = await allResults(fanout.url, tenant.key, jobId);
      const foreign = results.filter((r) => !String(r.input.id).startsWith(prefix)).length;
      return { followed, results, foreign };
    }),
  );
  const wallMs = performance.now() - started;
  const firstResultMs = Math.min(...jobs.map((j) => j.followed.firstResultMs ?? Infinity));
  const recorded = jobs.reduce((s, j) => s + new Set(j.results.map((r) => r.index)).size, 0);
  const succeeded = jobs.reduce((s, j) => s + j.results.filter((r) => r.success).length, 0);
  const foreign = jobs.reduce((s, j) => s + j.foreign, 0);
  rows.push({
    scenario: "S5",
    runner: "Fanout",
    w: { ...w, n: 5000, concurrency: 200 },
    figures: { wallMs, firstResultMs, recorded, succeeded },
    attempts: await requestsFor(w.tag),
    peakMb: sampler.stop(),
    note: `10 jobs, 3 tenants, C=20 each; ${foreign} results in a foreign job`,
  });
  process.stderr.write(`${(wallMs / 1000).toFixed(2)} s\n`);
}

/** S6: a fold of 100 inputs, inner L = 500 ms, reduction R = 200 ms, C = 16; ideal N·R + L. */
let foldRow = "";
async function runFoldScenario(): Promise<void> {
  if (only && !only.has("S6")) return;
  const w = { n: 100, concurrency: 16, innerMs: 500, reductionMs: 200, tag: `S6-${Date.now()}` };
  process.stderr.write(`S6: fold of ${w.n}, L=${w.innerMs} ms, R=${w.reductionMs} ms, C=${w.concurrency} … `);
  const sampler = samplePeak(() => fanout.process.pid);
  const r = await runFold(fanout.url, fanoutKey, w);
  const peak = sampler.stop();
  const ideal = w.n * w.reductionMs + w.innerMs;
  const naive = w.n * (w.innerMs + w.reductionMs);
  process.stderr.write(`${(r.wallMs / 1000).toFixed(2)} s\n`);
  foldRow = [
    "| scenario | N | C | L inner (ms) | R reduction (ms) | wall (s) | ideal N·R + L (s) | efficiency | N·(L + R), inner then reduction in turn (s) | reductions in order | succeeded | attempts | peak MB |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|",
    `| S6 reduce | ${w.n} | ${w.concurrency} | ${w.innerMs} | ${w.reductionMs} | ${(r.wallMs / 1000).toFixed(2)} | ${(ideal / 1000).toFixed(2)} | ${(ideal / r.wallMs).toFixed(2)} | ${(naive / 1000).toFixed(2)} | ${r.inOrder ? "yes" : "NO"} | ${r.succeeded} | ${r.attempts} | ${Math.round(peak)} |`,
  ].join("\n");
}

/** S7: the ADR's corpus, scaled in time: 1,000 documents, 10 per mapper, 50 mappers, L = 2 s, 20 categories. */
let corpusRows = "";
async function runCorpusScenario(): Promise<void> {
  if (only && !only.has("S7")) return;
  const lines = [
    "| strategy | N | D | mappers | L (s) | wall (s) | ideal (s) | efficiency | overhead | calls | tokens |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  ];
  // A new tenant's first job creates its call workers; its later jobs borrow them warm from the
  // tenant's pool (the three strategies below run on the bench tenant, after the jobs before them).
  const coldKey = (await newTenant(fanout.url)).key;
  if (only) await runThroughFanout(fanout.url, fanoutKey, { n: 50, concurrency: 50, latencyMs: 10, tag: `S7-warm-${Date.now()}` }); // run alone: no job before it made the bench tenant's workers
  const runs = [
    { label: "hierarchical, a new tenant's first job", strategy: "hierarchical", key: coldKey },
    ...(["hierarchical", "flat", "category"] as const).map((strategy) => ({ label: strategy, strategy, key: fanoutKey })),
  ] as const;
  for (const run of runs) {
    const { strategy } = run;
    const w = { n: 1000, perMapper: 10, mappers: 50, latencyMs: 2000, categories: 20, fanIn: 5, strategy, tag: `S7-${strategy}-${Date.now()}` };
    process.stderr.write(`S7 ${run.label}: N=${w.n} D=${w.perMapper} P=${w.mappers} L=${w.latencyMs} ms … `);
    const r = await runCorpus(fanout.url, run.key, w);
    const ideal = idealMs(w);
    process.stderr.write(`${(r.wallMs / 1000).toFixed(2)} s\n`);
    const overhead = ((r.wallMs - ideal) / ideal) * 100;
    lines.push(
      `| ${run.label} | ${w.n} | ${w.perMapper} | ${w.mappers} | ${w.latencyMs / 1000} | ${(r.wallMs / 1000).toFixed(2)} | ${(ideal / 1000).toFixed(2)} | ${(ideal / r.wallMs).toFixed(2)} | ${overhead.toFixed(1)} % | ${r.calls} | ${r.tokens} |`,
    );
  }
  const shuffleMs = timeShuffle();
  lines.push(
    "",
    `Shuffle of 100,000 synthetic extractions (10,000 batches, 20 categories, dedupe on a field, highest_confidence): ${shuffleMs.toFixed(0)} ms in one call.`,
  );
  corpusRows = lines.join("\n");
}

/** S8: a 3-step pipeline whose middle step is a 500-element batch at max_concurrent 50, L = 200 ms. */
let pipelineRow = "";
async function runPipelineScenario(): Promise<void> {
  if (only && !only.has("S8")) return;
  const w = { n: 500, maxConcurrent: 50, latencyMs: 200, tag: `S8-${Date.now()}` };
  process.stderr.write(`S8: pipeline, batch of ${w.n} at max_concurrent ${w.maxConcurrent}, L=${w.latencyMs} ms … `);
  const r = await runPipeline(fanout.url, fanoutKey, w);
  const ideal = pipelineIdealMs(w);
  process.stderr.write(`${(r.wallMs / 1000).toFixed(2)} s\n`);
  pipelineRow = [
    "| scenario | steps | batch N | max_concurrent | L (ms) | wall (s) | ideal (2 + ceil(N/M))·L (s) | efficiency | overhead | calls |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    `| S8 pipeline | 3 | ${w.n} | ${w.maxConcurrent} | ${w.latencyMs} | ${(r.wallMs / 1000).toFixed(2)} | ${(ideal / 1000).toFixed(2)} | ${(ideal / r.wallMs).toFixed(2)} | ${(((r.wallMs - ideal) / ideal) * 100).toFixed(1)} % | ${r.calls} |`,
  ].join("\n");
}

/**
 * S9: a provider with room for 8 calls in flight (past that: 429, Retry-After 1), a job at
 * concurrency 64, N = 400, L = 200 ms; ideal ceil(N/8)·L. Fanout's first job on a fresh tenant,
 * then the tenant's second (the learned limit), against baseline A at p-limit 64 with the SDK's
 * default retries. The tenant calls that provider with a key of its own, as an OpenAI-compatible
 * server without rate-limit headers: the adaptive limit is per key and model, and the deployment's
 * key is the other scenarios' (used just now, so a first job on it would not start paced).
 */
let capacityRows = "";
async function runCapacityScenario(): Promise<void> {
  if (only && !only.has("S9")) return;
  const lines = [
    "| run | N | C | capacity | L (ms) | wall (s) | ideal ceil(N/8)·L (s) | × ideal | succeeded | calls | answered 429 | 429 share |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  ];
  const key = (await newTenant(fanout.url)).key;
  const own = await call(fanout.url, "PUT", "/v1/providers/openai-compatible", {
    token: key,
    body: { api_key: `sk-bench-s9-${Date.now()}`, base_url: `${fake.url}/v1` },
  });
  if (own.status !== 200) throw new Error(`PUT /v1/providers/openai-compatible: ${own.status} ${JSON.stringify(own.body)}`);
  const stats = async (tag: string) => (await (await fetch(`${fake.url}/_fake/stats?tag=${tag}`)).json()) as { requests: number; throttled: number };
  for (const run of ["Fanout, the tenant's first job", "Fanout, its second job", "A: p-limit 64 + openai"]) {
    const w = { n: 400, concurrency: 64, latencyMs: 200, cap: 8, maxRetries: 10, tag: `S9-${Date.now()}`, provider: "openai-compatible" as const };
    process.stderr.write(`S9 ${run}: N=${w.n} C=${w.concurrency} capacity ${w.cap} … `);
    const figures = run.startsWith("A") ? (await runChild("bench/baseline-a.ts", w)).figures : await runThroughFanout(fanout.url, key, w);
    const s = await stats(w.tag);
    const ideal = Math.ceil(w.n / w.cap) * w.latencyMs;
    process.stderr.write(`${(figures.wallMs / 1000).toFixed(2)} s, ${s.throttled} answered 429\n`);
    lines.push(
      `| ${run} | ${w.n} | ${w.concurrency} | ${w.cap} | ${w.latencyMs} | ${(figures.wallMs / 1000).toFixed(2)} | ${(ideal / 1000).toFixed(2)} | ${(figures.wallMs / ideal).toFixed(2)} | ${figures.succeeded} | ${s.requests} | ${s.throttled} | ${((s.throttled / s.requests) * 100).toFixed(1)} % |`,
    );
  }
  capacityRows = lines.join("\n");
}

/**
 * S10, fairness: tenant A's 10,000-item job (C = 100, L = 500 ms) is under way when tenant B
 * submits 10 items (C = 10, L = 500 ms). B's wall time, POST to MAP_COMPLETED, against B alone
 * on an idle server; the target is at most one call latency more.
 */
let fairnessRows = "";
async function runFairnessScenario(): Promise<void> {
  if (only && !only.has("S10")) return;
  const [a, b] = [(await newTenant(fanout.url)).key, (await newTenant(fanout.url)).key];
  const small = (tag: string) => ({ n: 10, concurrency: 10, latencyMs: 500, tag });
  const timeSmall = async (tag: string) => {
    const started = performance.now();
    const jobId = await startJob(fanout.url, b, mapBody(small(tag)));
    return (await followJob(fanout.url, b, jobId, started)).wallMs;
  };
  process.stderr.write("S10: B alone … ");
  const alone = await timeSmall(`S10-alone-${Date.now()}`);
  process.stderr.write(`${(alone / 1000).toFixed(2)} s; with A's 10,000 items under way … `);
  const big = await startJob(fanout.url, a, mapBody({ n: 10_000, concurrency: 100, latencyMs: 500, tag: `S10-big-${Date.now()}` }));
  await new Promise((r) => setTimeout(r, 3_000)); // A at full speed
  const busy: number[] = [];
  for (let i = 0; i < 3; i++) busy.push(await timeSmall(`S10-busy-${i}-${Date.now()}`));
  await call(fanout.url, "POST", `/v1/jobs/${big}/cancel`, { token: a });
  process.stderr.write(`${busy.map((ms) => (ms / 1000).toFixed(2)).join(", ")} s\n`);
  const worst = Math.max(...busy);
  fairnessRows = [
    "| B's job (10 items, C = 10, L = 500 ms) | wall (s) | ideal L (s) | delay over B alone (s) |",
    "|---|---:|---:|---:|",
    `| alone | ${(alone / 1000).toFixed(2)} | 0.50 | – |`,
    ...busy.map((ms, i) => `| while A's 10,000 items run, try ${i + 1} | ${(ms / 1000).toFixed(2)} | 0.50 | ${((ms - alone) / 1000).toFixed(2)} |`),
    "",
    `Worst delay ${((worst - alone) / 1000).toFixed(2)} s against a target of one call latency (0.50 s).`,
  ].join("\n");
}

function table(): string {
  const baselineA = new Map(rows.filter((r) => r.runner.startsWith("A")).map((r) => [r.scenario, r.figures.wallMs]));
  const lines = [
    "| scenario | runner | N | C | L (ms) | wall (s) | ideal (s) | efficiency | × A | first result (s) | peak MB | succeeded | attempts | lost |",
    "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  ];
  for (const r of rows) {
    const ideal = r.scenario === "S5" ? Math.ceil(500 / 20) * 300 : Math.ceil(r.w.n / r.w.concurrency) * r.w.latencyMs;
    const a = baselineA.get(r.scenario);
    const cells = [
      r.scenario,
      r.runner + (r.note ? ` (${r.note})` : ""),
      r.w.n,
      r.w.concurrency,
      r.w.latencyMs,
      (r.figures.wallMs / 1000).toFixed(2),
      (ideal / 1000).toFixed(2),
      (ideal / r.figures.wallMs).toFixed(2),
      a ? (r.figures.wallMs / a).toFixed(2) : "–",
      r.figures.firstResultMs === null ? "–" : (r.figures.firstResultMs / 1000).toFixed(2),
      Math.round(r.peakMb),
      r.figures.succeeded,
      r.attempts,
      r.w.n - r.figures.recorded,
    ];
    lines.push(`| ${cells.join(" | ")} |`);
  }
  return lines.join("\n");
}

function machine(): string {
  const workerd = execFileSync(`${ROOT}/node_modules/.bin/workerd`, ["--version"], { encoding: "utf8" }).trim();
  return `${cpus().length} cores (${cpus()[0]?.model.trim()}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${workerd}`;
}

/** A block of its own between `<!-- bench-<name>:start/end -->` (its columns differ from the map table's). */
function writeBlock(name: string, rowsText: string): void {
  if (!rowsText) return;
  const path = `${ROOT}/BENCHMARKS.md`;
  const block = [
    `<!-- bench-${name}:start -->`,
    `Run on ${new Date().toISOString().slice(0, 10)} with \`npm run bench${only ? ` -- --only ${[...only].join(",")}` : ""}\` on ${machine()}.`,
    "",
    rowsText,
    `<!-- bench-${name}:end -->`,
  ].join("\n");
  const pattern = new RegExp(`<!-- bench-${name}:start -->[\\s\\S]*<!-- bench-${name}:end -->`);
  writeFileSync(path, readFileSync(path, "utf8").replace(pattern, block));
}

function writeReport(): void {
  const path = `${ROOT}/BENCHMARKS.md`;
  const block = [
    "<!-- bench:start -->",
    `Run on ${new Date().toISOString().slice(0, 10)} with \`npm run bench${only ? ` -- --only ${[...only].join(",")}` : ""}\` on ${machine()}.`,
    "",
    table(),
    "<!-- bench:end -->",
  ].join("\n");
  const current = readFileSync(path, "utf8");
  const next = current.replace(/<!-- bench:start -->[\s\S]*<!-- bench:end -->/, block);
  writeFileSync(path, next);
}

const fake = await startFakeModelServer();
const fanout = await startFanout({
  vars: { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: "sk-bench", MAX_REQUEST_BYTES: String(32 * 1024 * 1024) },
});
try {
  fanoutKey = (await newTenant(fanout.url)).key;
  await runAll("S1", { n: 1000, concurrency: 50, latencyMs: 1000 }, ["fanout", "a", "b"]);
  await runAll("S2", { n: 1000, concurrency: 50, latencyMs: 200 }, ["fanout", "a", "b"]);
  await fakeConfig({ rateLimitFraction: 0.1, proseFraction: 0.05 });
  await runAll("S3", { n: 500, concurrency: 25, latencyMs: 500 }, ["fanout", "a", "b"]);
  await fakeConfig({ rateLimitFraction: 0, proseFraction: 0 });
  await runAll("S4", { n: 10_000, concurrency: 100, latencyMs: 500 }, ["fanout", "a", "b"]);
  await runConcurrentTenants();
  // #15's wide job: 500 calls in flight from one job (the coordinator starts 400 workers per invocation).
  await runAll("S11", { n: 10_000, concurrency: 500, latencyMs: 1000 }, ["fanout", "a"]);
  await runFoldScenario();
  await runCorpusScenario();
  await runPipelineScenario();
  await runCapacityScenario();
  await runFairnessScenario();
  console.log(table());
  if (foldRow) console.log(foldRow);
  if (corpusRows) console.log(corpusRows);
  if (pipelineRow) console.log(pipelineRow);
  if (capacityRows) console.log(capacityRows);
  if (fairnessRows) console.log(fairnessRows);
  if (!only) writeReport();
  writeBlock("reduce", foldRow);
  writeBlock("map-reduce", corpusRows);
  writeBlock("pipeline", pipelineRow);
  writeBlock("capacity", capacityRows);
  writeBlock("fairness", fairnessRows);
} finally {
  await fanout.stop();
  await fake.close();
}
