/**
 * `npm run bench:fallbacks` — S16 (#53): a primary model that goes down mid-run, with a fallback
 * beside it. FALLBACK_ITEMS items (default 2,000), each a short JSON answer, on openai/gpt-6-sol
 * ($2 / $10 per million) with anthropic/claude-sonnet-4-6 ($3 / $15) as the fallback; the fake
 * answers each call in FALLBACK_LATENCY_MS (default 1,000: the run takes two minutes, the outage is mid-run), and FALLBACK_OUTAGE_AT_SECS (default 20)
 * into each run the primary answers every call with a 500 for FALLBACK_OUTAGE_SECS (default 60).
 * - a p-limit loop of the OpenAI SDK (concurrency 16, the SDK's own retries: 2, with its backoff):
 *   what users write — an item whose retries all meet the outage is lost;
 * - Fanout, the same concurrency, `fallbacks: ["anthropic/claude-sonnet-4-6"]`, `max_retries` 2:
 *   the outage opens the primary's circuit, its items go to the fallback, a probe after the
 *   cool-down brings them back.
 * Items lost, wall time, the share each model answered, and dollars at list prices (the loop's
 * from the same table and the usage the fake reports). One server, one fake, one run after the other.
 */
import OpenAI from "openai";
import pLimit from "p-limit";
import { allResults, call, newTenant, waitForJob } from "../test/e2e/harness/api.ts";
import { startFanout } from "../test/e2e/harness/fanout-server.ts";
import { startFakeModelServer } from "../test/fake-model/server.ts";
import { costOf, priceOf } from "../src/llm/prices.ts";

const N = Number(process.env.FALLBACK_ITEMS ?? 2_000);
const LATENCY_MS = Number(process.env.FALLBACK_LATENCY_MS ?? 1000);
const OUTAGE_AT_MS = Number(process.env.FALLBACK_OUTAGE_AT_SECS ?? 20) * 1000;
const OUTAGE_MS = Number(process.env.FALLBACK_OUTAGE_SECS ?? 60) * 1000;
const CONCURRENCY = 16;
const PRIMARY = "gpt-6-sol";
const FALLBACK = "claude-sonnet-4-6";
const SCHEMA = { type: "object", properties: { label: { type: "string" } }, required: ["label"] };
const PRIMARY_PRICE = priceOf({}, `openai/${PRIMARY}`);
if (!PRIMARY_PRICE) throw new Error("the shipped table has no price for the primary model");

const fake = await startFakeModelServer({ latencyMs: LATENCY_MS });
const fanout = await startFanout({
  vars: {
    OPENAI_BASE_URL: `${fake.url}/v1`,
    OPENAI_API_KEY: "sk-bench-fallbacks",
    ANTHROPIC_BASE_URL: fake.url,
    ANTHROPIC_API_KEY: "sk-ant-bench-fallbacks",
    MAX_ITEMS_PER_JOB: "10000",
  },
});
const { key } = await newTenant(fanout.url);

/** The primary goes down OUTAGE_AT_MS after `start`, for OUTAGE_MS. */
function scheduleOutage(): NodeJS.Timeout {
  return setTimeout(() => {
    void fetch(`${fake.url}/_fake/outage`, { method: "POST", body: JSON.stringify({ model: PRIMARY, ms: OUTAGE_MS }) });
  }, OUTAGE_AT_MS);
}

const item = (i: number, tag: string) => `Label item ${i}. <<fake tag=${tag} id=${i}>>`;

async function loop(tag: string) {
  const client = new OpenAI({ apiKey: "sk-bench-fallbacks-loop", baseURL: `${fake.url}/v1` }); // the SDK's default retries (2)
  const limit = pLimit(CONCURRENCY);
  let usd = 0;
  let lost = 0;
  await Promise.all(
    Array.from({ length: N }, (_, i) =>
      limit(async () => {
        try {
          const completion = await client.chat.completions.create({
            model: PRIMARY,
            messages: [{ role: "user", content: item(i, tag) }],
            response_format: { type: "json_schema", json_schema: { name: "output", schema: SCHEMA } },
          });
          const usage = completion.usage;
          usd += costOf(PRIMARY_PRICE as NonNullable<typeof PRIMARY_PRICE>, {
            input_tokens: usage?.prompt_tokens ?? 0,
            output_tokens: usage?.completion_tokens ?? 0,
          });
        } catch {
          lost++;
        }
      }),
    ),
  );
  return { usd, lost };
}

async function fanoutJob(tag: string) {
  const body = {
    inputs: Array.from({ length: N }, (_, i) => item(i, tag)),
    prompt_template: "{{ item }}",
    model: `openai/${PRIMARY}`,
    fallbacks: [`anthropic/${FALLBACK}`],
    output_schema: SCHEMA,
    concurrency: CONCURRENCY,
    max_retries: 2,
  };
  const created = await call(fanout.url, "POST", "/v1/map", { token: key, body });
  if (created.status !== 202) throw new Error(`${created.status} ${JSON.stringify(created.body).slice(0, 500)}`);
  const job = await waitForJob(fanout.url, key, created.body.job_id, 3_600_000);
  const results = await allResults(fanout.url, key, job.id);
  const byModel = new Map<string, number>();
  for (const r of results) if (r.success) byModel.set(r.model, (byModel.get(r.model) ?? 0) + 1);
  return { job, lost: N - job.succeeded, byModel };
}

const share = (n: number) => `${((n / N) * 100).toFixed(1)} %`;
const timed = async <T>(f: () => Promise<T>) => {
  const started = performance.now();
  const value = await f();
  return { value, secs: (performance.now() - started) / 1000 };
};

const rows: string[] = [];
try {
  const stamp = Date.now();
  let outage = scheduleOutage();
  const l = await timed(() => loop(`s16-loop-${stamp}`));
  clearTimeout(outage);
  rows.push(
    `| p-limit loop (OpenAI SDK, its 2 retries) | ${l.value.lost} | ${l.secs.toFixed(1)} | ${share(N - l.value.lost)} / — | ${l.value.usd.toFixed(4)} |`,
  );
  console.log(rows.at(-1));
  await new Promise((r) => setTimeout(r, Math.max(0, OUTAGE_MS - (l.secs * 1000 - OUTAGE_AT_MS)))); // the outage is over before the next run
  outage = scheduleOutage();
  const f = await timed(() => fanoutJob(`s16-fanout-${stamp}`));
  clearTimeout(outage);
  const { job, lost, byModel } = f.value;
  rows.push(
    `| Fanout, fallbacks [${FALLBACK}] | ${lost} | ${f.secs.toFixed(1)} | ${share(byModel.get(`openai/${PRIMARY}`) ?? 0)} / ${share(byModel.get(`anthropic/${FALLBACK}`) ?? 0)} | ${Number(job.cost_usd).toFixed(4)} |`,
  );
  console.log(rows.at(-1));
  console.log(
    `\nS16, ${N} items, ${PRIMARY} down for ${OUTAGE_MS / 1000} s from ${OUTAGE_AT_MS / 1000} s into each run, ${LATENCY_MS} ms a call, concurrency ${CONCURRENCY}\n` +
      `| runner | items lost | wall s | answered by ${PRIMARY} / ${FALLBACK} | USD |\n|---|---|---|---|---|\n${rows.join("\n")}`,
  );
  console.log(`Fanout's models: ${JSON.stringify(job.models)}; attempts ${job.total_attempts}`);
} finally {
  await fanout.stop();
  await fake.close();
}
