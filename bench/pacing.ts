/**
 * `npm run bench:pacing`: pacing by the provider's limits (#33), side by side in one run against
 * the fake model server holding keys to real per-minute windows (OpenAI headers, enforced per
 * second as providers quantize them; 200 ms a call).
 * - S12: one job of S12_ITEMS (default 2,000) items of ~500 tokens against a key of 600 RPM and
 *   200,000 TPM: Fanout at concurrency 16, and a p-limit loop around the openai SDK (its own
 *   retries, 2) at the concurrencies in S12_LOOP (default 1 and 4). The limit-bound ideal is
 *   max(N / RPM, tokens / TPM); 429s as a share of the calls sent.
 * - S13: three tenants on one deployment key of 6,000 RPM, S13_ITEMS (default 1,000) small items
 *   each, started together: each tenant's calls while all three run, as a share of the limit;
 *   then one tenant alone.
 * - S18: fairness on a slow shared key (120 RPM on the deployment key's S18 model): tenant A runs
 *   three jobs of 60 items; once they are under way tenant B submits 10. B's wall time against the
 *   10 s its half of the key takes, and each tenant's share of the calls while B ran (#48: a tenant
 *   with more jobs took ~88 %, and B took 31.7 s).
 * PACING_ONLY=S12,S13,S18 runs some of them (all by default).
 * The pacer's round trips: each job's coordinator logs how often it asked its pacer when it ends
 * (durable-objects/coordinator/pacing.ts); the table shows them as asks a second over the run.
 */
import OpenAI from "openai";
import pLimit from "p-limit";
import { call, newTenant, waitForJob } from "../test/e2e/harness/api.ts";
import { startFanout } from "../test/e2e/harness/fanout-server.ts";
import { startFakeModelServer } from "../test/fake-model/server.ts";
import type { LimitConfig } from "../test/fake-model/limits.ts";
import type { TagStats } from "../test/fake-model/server.ts";
import { PACER_ASKS_LOG } from "../src/engine/pacing.ts";

const S12_ITEMS = Number(process.env.S12_ITEMS ?? 2_000);
const S12_LOOP = (process.env.S12_LOOP ?? "1,4")
  .split(",")
  .map(Number)
  .filter((c) => c > 0); // S12_LOOP=none: Fanout alone
const S13_ITEMS = Number(process.env.S13_ITEMS ?? 1_000);
const LATENCY_MS = 200;
// S12_RPM, S12_TPM (0: none) and S12_CONCURRENCY change the key and the job (e.g. 10,000 RPM: the pacer's round trips at a high rate).
const S12_LIMITS: LimitConfig = {
  rpm: Number(process.env.S12_RPM ?? 600),
  tpm: Number(process.env.S12_TPM ?? 200_000) || null,
  headers: "openai",
  burst_secs: 1,
};
const S12_CONCURRENCY = Number(process.env.S12_CONCURRENCY ?? 16);
const S13_LIMITS: LimitConfig = { rpm: 6_000, tpm: null, headers: "openai", burst_secs: 1 };
const DEPLOYMENT_KEY = `sk-bench-deployment-${Date.now()}`;
const S18_MODEL = "gpt-6-sol";
const S18_LIMITS: LimitConfig = { rpm: 120, tpm: null, headers: "openai", burst_secs: 1 };
const ONLY = process.env.PACING_ONLY ? new Set(process.env.PACING_ONLY.split(",")) : null;
const runs = (scenario: string): boolean => ONLY === null || ONLY.has(scenario);

const fake = await startFakeModelServer({ latencyMs: LATENCY_MS });
const fanout = await startFanout({ vars: { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: DEPLOYMENT_KEY, MAX_ITEMS_PER_JOB: "10000" } });
const stats = async (tag: string): Promise<TagStats> => (await fetch(`${fake.url}/_fake/stats?tag=${tag}`)).json();

/** The round trips the jobs' coordinators made to their pacers, from the line each logs as it ends (waited for: the log may trail the job's end). */
async function pacerAsks(jobIds: string[]): Promise<number> {
  for (let waited = 0; ; waited += 100) {
    const lines = fanout
      .logs()
      .split("\n")
      .filter((l) => l.includes(PACER_ASKS_LOG));
    const found = lines.map((l) => JSON.parse(l.slice(l.indexOf("{"))) as { job_id: string; asks: number }).filter((l) => jobIds.includes(l.job_id));
    if (new Set(found.map((l) => l.job_id)).size === jobIds.length || waited >= 5_000) return found.reduce((n, l) => n + l.asks, 0);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function limitedKey(key: string, limits: LimitConfig): Promise<string> {
  await fetch(`${fake.url}/_fake/limits`, { method: "POST", body: JSON.stringify({ key, limits }) });
  return key;
}

/** ~500 tokens as the fake counts them (4 characters a token). */
const FILLER = "lorem ipsum dolor sit amet ".repeat(74);
const s12Prompt = (tag: string, i: number) => `Summarize item ${i}: ${FILLER} <<fake tag=${tag} id=${i}>>`;

function ideal(n: number, tokensPerCall: number, limits: LimitConfig): number {
  return Math.max((n / limits.rpm) * 60, limits.tpm ? ((n * tokensPerCall) / limits.tpm) * 60 : 0);
}

async function s12Fanout(tag: string) {
  const apiKey = await limitedKey(`sk-bench-s12-${tag}`, S12_LIMITS);
  const { key } = await newTenant(fanout.url);
  await call(fanout.url, "PUT", "/v1/providers/openai", { token: key, body: { api_key: apiKey, base_url: `${fake.url}/v1` } });
  const started = performance.now();
  const created = await call(fanout.url, "POST", "/v1/map", {
    token: key,
    body: {
      inputs: Array.from({ length: S12_ITEMS }, (_, i) => i),
      prompt_template: `Summarize item {{ item }}: ${FILLER} <<fake tag=${tag} id={{ item }}>>`,
      model: "openai/gpt-6-luna",
      concurrency: S12_CONCURRENCY,
    },
  });
  const job = await waitForJob(fanout.url, key, created.body.job_id, 3_600_000);
  const secs = (performance.now() - started) / 1000;
  return { succeeded: job.succeeded as number, secs, asks: await pacerAsks([created.body.job_id]), ...(await stats(tag)) };
}

async function s12Loop(tag: string, concurrency: number) {
  const client = new OpenAI({ apiKey: await limitedKey(`sk-bench-s12-${tag}`, S12_LIMITS), baseURL: `${fake.url}/v1`, maxRetries: 2 });
  const limit = pLimit(concurrency);
  const started = performance.now();
  const outcomes = await Promise.all(
    Array.from({ length: S12_ITEMS }, (_, i) =>
      limit(() =>
        client.chat.completions.create({ model: "gpt-6-luna", messages: [{ role: "user", content: s12Prompt(tag, i) }] }).then(
          () => true,
          () => false,
        ),
      ),
    ),
  );
  return { succeeded: outcomes.filter(Boolean).length, secs: (performance.now() - started) / 1000, asks: null, ...(await stats(tag)) };
}

/** S13: the tenants' jobs started together on the deployment key; the calls each got while all ran. */
async function s13(tenants: number) {
  const tags = Array.from({ length: tenants }, (_, i) => `s13-${tenants}-${i}-${Date.now()}`);
  const owners = await Promise.all(tags.map(() => newTenant(fanout.url)));
  const started = performance.now();
  const jobs = await Promise.all(
    tags.map((tag, i) =>
      call(fanout.url, "POST", "/v1/map", {
        token: owners[i]!.key,
        body: {
          inputs: Array.from({ length: S13_ITEMS }, (_, j) => j),
          prompt_template: `Item {{ item }} <<fake tag=${tag} id={{ item }}>>`,
          model: "openai/gpt-6-luna",
          concurrency: 32,
        },
      }),
    ),
  );
  await Promise.all(jobs.map((j, i) => waitForJob(fanout.url, owners[i]!.key, j.body.job_id, 3_600_000)));
  const secs = (performance.now() - started) / 1000;
  const all = await Promise.all(tags.map(stats));
  const from = Math.min(...all.map((s) => Math.min(...s.times))) + 2_000; // past the first seconds (the first round before the headers)
  const to = Math.min(...all.map((s) => Math.max(...s.times)));
  const minutes = (to - from) / 60_000;
  const perTenant = all.map((s) => s.times.filter((t) => t >= from && t <= to).length / minutes / S13_LIMITS.rpm);
  return {
    secs,
    perTenant,
    asks: await pacerAsks(jobs.map((j) => j.body.job_id as string)),
    rate_limited: all.reduce((n, s) => n + s.rate_limited, 0),
    calls: all.reduce((n, s) => n + s.requests, 0),
  };
}

/** S18: tenant A's three jobs on a slow shared key, then tenant B's ten items: B's wall time, and the tenants' shares while B ran. */
async function s18() {
  const [a, b] = [await newTenant(fanout.url), await newTenant(fanout.url)];
  const stamp = Date.now();
  const body = (tag: string, n: number) => ({
    inputs: Array.from({ length: n }, (_, j) => j),
    prompt_template: `Item {{ item }} <<fake tag=${tag} id={{ item }}>>`,
    model: `openai/${S18_MODEL}`,
    concurrency: 16,
  });
  const aTags = [0, 1, 2].map((i) => `s18-a${i}-${stamp}`);
  const aJobs = await Promise.all(aTags.map((tag) => call(fanout.url, "POST", "/v1/map", { token: a.key, body: body(tag, 60) })));
  await new Promise((r) => setTimeout(r, 5_000)); // A's jobs under way at the key's pace
  const bTag = `s18-b-${stamp}`;
  const started = performance.now();
  const bJob = await call(fanout.url, "POST", "/v1/map", { token: b.key, body: body(bTag, 10) });
  const done = await waitForJob(fanout.url, b.key, bJob.body.job_id, 600_000);
  const secs = (performance.now() - started) / 1000;
  for (const j of aJobs) await call(fanout.url, "POST", `/v1/jobs/${j.body.job_id}/cancel`, { token: a.key });
  const bStats = await stats(bTag);
  const from = Math.min(...bStats.times);
  const to = Math.max(...bStats.times);
  const aCalls = (await Promise.all(aTags.map(stats))).reduce((n, st) => n + st.times.filter((t) => t >= from && t <= to).length, 0);
  return {
    secs,
    succeeded: done.succeeded as number,
    bShare: bStats.requests / (bStats.requests + aCalls),
    aShare: aCalls / (bStats.requests + aCalls),
    rate_limited: bStats.rate_limited,
  };
}

/** Asks in all, and a second over the run's wall time. */
const perSec = (asks: number | null, secs: number): string => (asks === null ? "" : `${asks} (${(asks / secs).toFixed(1)})`);

const rows: string[] = [];
try {
  await limitedKey(DEPLOYMENT_KEY, S13_LIMITS);
  await fetch(`${fake.url}/_fake/limits`, { method: "POST", body: JSON.stringify({ key: DEPLOYMENT_KEY, limits: S18_LIMITS, model: S18_MODEL }) });
  const tokens = Math.ceil(s12Prompt("s12-x", 0).length / 4);
  const s12Ideal = ideal(S12_ITEMS, tokens, S12_LIMITS);
  const s12 = [
    [`Fanout (C=${S12_CONCURRENCY})`, () => s12Fanout(`s12-fanout-${Date.now()}`)] as const,
    ...S12_LOOP.map((c) => [`p-limit + SDK (C=${c})`, () => s12Loop(`s12-loop${c}-${Date.now()}`, c)] as const),
  ];
  for (const [runner, run] of S12_ITEMS > 0 && runs("S12") ? s12 : []) {
    // S12_ITEMS=0: S13 alone
    const r = await run();
    rows.push(
      `| S12 | ${runner} | ${r.succeeded}/${S12_ITEMS} | ${r.secs.toFixed(1)} | ${s12Ideal.toFixed(1)} | ${(r.secs / s12Ideal).toFixed(3)} | ${r.requests} | ${r.rate_limited} (${((100 * r.rate_limited) / r.requests).toFixed(2)} %) | ${perSec(r.asks, r.secs)} |`,
    );
    console.log(rows.at(-1));
  }
  for (const n of S13_ITEMS > 0 && runs("S13") ? [3, 1] : []) {
    // S13_ITEMS=0: S12 alone
    const r = await s13(n);
    rows.push(
      `| S13 | Fanout, ${n} tenant${n > 1 ? "s" : ""} × ${S13_ITEMS} | shares of the limit while all ran: ${r.perTenant.map((p) => p.toFixed(3)).join(", ")} | ${r.secs.toFixed(1)} | ${(((n * S13_ITEMS) / S13_LIMITS.rpm) * 60).toFixed(1)} | | ${r.calls} | ${r.rate_limited} | ${perSec(r.asks, r.secs)} |`,
    );
    console.log(rows.at(-1));
  }
  if (runs("S18")) {
    const r = await s18();
    rows.push(
      `| S18 | Fanout, B's 10 items while A's 3 jobs run (120 RPM) | ${r.succeeded}/10; shares while B ran: B ${r.bShare.toFixed(3)}, A ${r.aShare.toFixed(3)} | ${r.secs.toFixed(1)} | 10.0 | ${(r.secs / 10).toFixed(3)} | | ${r.rate_limited} | |`,
    );
    console.log(rows.at(-1));
  }
} finally {
  await fanout.stop();
  await fake.close();
}
console.log(
  [
    "| scenario | runner | items done | wall (s) | ideal (s) | × ideal | calls | 429s | pacer asks (a second) |",
    "|---|---|---|---:|---:|---:|---:|---:|---:|",
    ...rows,
  ].join("\n"),
);
