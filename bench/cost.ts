/**
 * `npm run bench:cost` — S14 (#34): what 1,000 items cost, from the shipped prices and the usage the
 * fake model reports (its prompt cache and batch APIs behave like the providers'). COST_ITEMS items
 * (default 10,000) of ~40 tokens behind a shared instruction of ~1,500 tokens (the system prompt),
 * each answered with a short JSON label, on anthropic/claude-sonnet-4-6 ($3 / $15 per million,
 * cache reads $0.30, 5-minute cache writes $3.75, batches half):
 * - a p-limit loop of the Anthropic SDK (concurrency 32): what users write, no cache_control;
 * - Fanout realtime without and with prompt caching (`prompt_cache` false / the default);
 * - Fanout batch without and with prompt caching;
 * - Fanout auto with caching, 10 % stragglers (lines the batch would finish in ten minutes): the
 *   deadline is met by cancelling the batch near it, the finished lines kept, the stragglers realtime.
 * One server, one fake, one after another; costs are the jobs' `cost_usd` (the loop's from the same
 * price table); the fake's latency is 50 ms a realtime call and 2 s a batch.
 */
import Anthropic from "@anthropic-ai/sdk";
import pLimit from "p-limit";
import { call, newTenant, waitForJob } from "../test/e2e/harness/api.ts";
import { startFanout } from "../test/e2e/harness/fanout-server.ts";
import { startFakeModelServer } from "../test/fake-model/server.ts";
import { costOf, priceOf } from "../src/llm/prices.ts";
import { anthropicUsage } from "../src/llm/anthropic.ts";

const N = Number(process.env.COST_ITEMS ?? 10_000);
/** COST_ONLY=5,6: those runs only (1 the loop … 6 auto). */
const ONLY = process.env.COST_ONLY ? new Set(process.env.COST_ONLY.split(",").map(Number)) : null;
const MODEL = "claude-sonnet-4-6";
const PRICE = priceOf({}, `anthropic/${MODEL}`);
if (!PRICE) throw new Error("the shipped table has no price for the bench's model");
const CONCURRENCY = 128;
const SCHEMA = { type: "object", properties: { label: { type: "string", enum: ["positive", "negative", "mixed"] } }, required: ["label"] };
const INSTRUCTION =
  `You label product reviews. ${"Read the review, weigh what it praises against what it blames, and answer with one label. ".repeat(64)}`.slice(0, 6_000);

const fake = await startFakeModelServer({ latencyMs: 50, batchDelayMs: 2_000 });
const fanout = await startFanout({
  vars: {
    ANTHROPIC_BASE_URL: fake.url,
    ANTHROPIC_API_KEY: "sk-ant-bench-cost",
    MAX_ITEMS_PER_JOB: "10000",
    BATCH_POLL_MS: "500",
    MAX_REQUEST_BYTES: String(32 * 1024 * 1024),
  },
});
const { key } = await newTenant(fanout.url);
const stats = async (tag: string) => (await (await fetch(`${fake.url}/_fake/stats?tag=${tag}`)).json()) as { requests: number; batched: number };

const review = (i: number, tag: string, extra = "") =>
  `Review ${i}: the battery lasts ${i % 9} days and the screen is fine. <<fake tag=${tag} id=${i}${extra}>>`;

/** Each run's own instruction (the same length): no run reads a prompt cache an earlier one wrote. */
const instruction = (run: number) => `Run ${run}. ${INSTRUCTION}`;

async function loop(tag: string) {
  const client = new Anthropic({ apiKey: "sk-ant-bench-cost-loop", baseURL: fake.url, maxRetries: 5 });
  const limit = pLimit(32);
  let usd = 0;
  await Promise.all(
    Array.from({ length: N }, (_, i) =>
      limit(async () => {
        const message = await client.messages.create({
          model: MODEL,
          max_tokens: 50,
          system: instruction(0),
          messages: [{ role: "user", content: `Label this review: ${review(i, tag)}` }],
          tools: [{ name: "output", description: "The answer", input_schema: SCHEMA as Anthropic.Tool.InputSchema }],
          tool_choice: { type: "tool", name: "output" },
        });
        usd += costOf(PRICE as NonNullable<typeof PRICE>, anthropicUsage(message.usage));
      }),
    ),
  );
  return usd;
}

async function fanoutJob(run: number, tag: string, extra: Record<string, unknown>, stragglers = false) {
  const inputs = Array.from({ length: N }, (_, i) => review(i, tag, stragglers && i % 10 === 9 ? " batch_ms=600000" : ""));
  const body = {
    inputs,
    prompt_template: "Label this review: {{ item }}",
    system_prompt: instruction(run),
    model: `anthropic/${MODEL}`,
    output_schema: SCHEMA,
    max_tokens: 50,
    concurrency: CONCURRENCY,
    timeout_secs: 2,
    ...extra,
  };
  const created = await call(fanout.url, "POST", "/v1/map", { token: key, body });
  if (created.status !== 202) throw new Error(`${created.status} ${JSON.stringify(created.body).slice(0, 500)}`);
  const job = await waitForJob(fanout.url, key, created.body.job_id, 3_600_000);
  if (job.status !== "completed" || job.succeeded !== N) throw new Error(`the job ended ${job.status} with ${job.succeeded} of ${N}`);
  return job as {
    cost_usd: number;
    usage: { cached_input_tokens: number; cache_write_input_tokens: number; duplicated: { cost_usd: number } };
    batches: unknown[];
    created_at: string;
    completed_at: string;
  };
}

const rows: string[] = [];
let base = 0;
function row(runner: string, usd: number, secs: number, detail: string) {
  base ||= usd;
  rows.push(`| ${runner} | ${((usd / N) * 1000).toFixed(4)} | ${(usd / base).toFixed(3)} | ${secs.toFixed(1)} | ${detail} |`);
  console.log(rows.at(-1));
}

const timed = async <T>(f: () => Promise<T>) => {
  const started = performance.now();
  const value = await f();
  return { value, secs: (performance.now() - started) / 1000 };
};

try {
  const stamp = Date.now();
  const tag = (run: number) => `cost${run}-${stamp}`; // the same length for every run: the same prompt tokens
  if (!ONLY || ONLY.has(1)) {
    const l = await timed(() => loop(tag(0)));
    row("p-limit loop (SDK, no cache_control)", l.value, l.secs, `${N} calls`);
  }
  const runs: [string, Record<string, unknown>, boolean][] = [
    ["Fanout realtime, prompt_cache false", { prompt_cache: false }, false],
    ["Fanout realtime, prompt caching", {}, false],
    ["Fanout batch, prompt_cache false", { prompt_cache: false, execution: { mode: "batch" } }, false],
    ["Fanout batch + prompt caching", { execution: { mode: "batch" } }, false],
    ["Fanout auto + caching, 10 % stragglers", { execution: { mode: "auto", deadline_secs: Number(process.env.COST_DEADLINE_SECS ?? 240) } }, true],
  ];
  for (const [i, [name, extra, stragglers]] of runs.entries()) {
    if (ONLY && !ONLY.has(i + 2)) continue;
    const t = tag(i + 1);
    const r = await timed(() => fanoutJob(i + 1, t, extra, stragglers));
    const s = await stats(t);
    const job = r.value;
    const wall = (Date.parse(job.completed_at) - Date.parse(job.created_at)) / 1000;
    const deadline = (extra.execution as { deadline_secs?: number } | undefined)?.deadline_secs;
    row(
      name,
      job.cost_usd,
      r.secs,
      `${s.requests - s.batched} realtime + ${s.batched} batched calls; cache reads ${job.usage.cached_input_tokens.toLocaleString("en-US")}, writes ${job.usage.cache_write_input_tokens.toLocaleString("en-US")} tokens; ${job.batches.length} batches${deadline ? `; ended at ${wall.toFixed(0)} s of a ${deadline} s deadline, duplicated $${job.usage.duplicated.cost_usd}` : ""}`,
    );
  }
  console.log(
    `\nS14, ${N} items, ${MODEL}: USD per 1,000 items, ratio to the loop, wall seconds\n| runner | USD / 1,000 items | × loop | wall s | calls, cache, batches |\n|---|---|---|---|---|\n${rows.join("\n")}`,
  );
} finally {
  await fanout.stop();
  await fake.close();
}
