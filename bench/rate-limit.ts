/**
 * `npm run bench:rate-limit`: the contract's case of a key that enforces 120 requests a minute,
 * side by side in one run. 30 items at concurrency 16 against the fake model server holding one
 * key to 120 RPM (enforced as 2 a second, as providers quantize their limits, and as the whole
 * minute at once), through Fanout (max_retries 3) and through a p-limit loop around the openai
 * SDK with its own retries (2, its default): how many items each brings home, in how long, and
 * with how many 429s.
 */
import OpenAI from "openai";
import pLimit from "p-limit";
import { call, newTenant, waitForJob } from "../test/e2e/harness/api.ts";
import { startFanout } from "../test/e2e/harness/fanout-server.ts";
import { startFakeModelServer } from "../test/fake-model/server.ts";
import type { LimitConfig } from "../test/fake-model/limits.ts";

const ITEMS = 30;
const CONCURRENCY = 16;
const fake = await startFakeModelServer({ latencyMs: 200 });
const fanout = await startFanout({ vars: { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: "sk-unused" } });

async function limitedKey(name: string, limits: LimitConfig): Promise<string> {
  const key = `sk-bench-${name}-${Date.now()}`;
  await fetch(`${fake.url}/_fake/limits`, { method: "POST", body: JSON.stringify({ key, limits }) });
  return key;
}

const prompt = (i: number, tag: string) => `Summarize item ${i} <<fake tag=${tag} id=${i}>>`;

async function throughFanout(limits: LimitConfig, tag: string) {
  const apiKey = await limitedKey(tag, limits);
  const { key } = await newTenant(fanout.url);
  await call(fanout.url, "PUT", "/v1/providers/openai", { token: key, body: { api_key: apiKey, base_url: `${fake.url}/v1` } });
  const started = performance.now();
  const created = await call(fanout.url, "POST", "/v1/map", {
    token: key,
    body: {
      inputs: Array.from({ length: ITEMS }, (_, i) => i),
      prompt_template: `Summarize item {{ item }} <<fake tag=${tag} id={{ item }}>>`,
      model: "openai/gpt-6-luna",
      concurrency: CONCURRENCY,
    },
  });
  const job = await waitForJob(fanout.url, key, created.body.job_id, 600_000);
  const stats = await (await fetch(`${fake.url}/_fake/stats?tag=${tag}`)).json();
  return { succeeded: job.succeeded, failed: job.failed, secs: (performance.now() - started) / 1000, calls: stats.requests, rate_limited: stats.rate_limited };
}

async function throughLoop(limits: LimitConfig, tag: string) {
  const client = new OpenAI({ apiKey: await limitedKey(tag, limits), baseURL: `${fake.url}/v1`, maxRetries: 2 });
  const limit = pLimit(CONCURRENCY);
  const started = performance.now();
  const outcomes = await Promise.all(
    Array.from({ length: ITEMS }, (_, i) =>
      limit(() =>
        client.chat.completions.create({ model: "gpt-6-luna", messages: [{ role: "user", content: prompt(i, tag) }] }).then(
          () => true,
          () => false,
        ),
      ),
    ),
  );
  const stats = await (await fetch(`${fake.url}/_fake/stats?tag=${tag}`)).json();
  const succeeded = outcomes.filter(Boolean).length;
  return { succeeded, failed: ITEMS - succeeded, secs: (performance.now() - started) / 1000, calls: stats.requests, rate_limited: stats.rate_limited };
}

const rows: string[] = [];
try {
  for (const [name, limits] of [
    ["120 RPM, 2 a second", { rpm: 120, headers: "openai", burst_secs: 1 }],
    ["120 RPM, the minute at once", { rpm: 120, headers: "openai", burst_secs: 60 }],
  ] as [string, LimitConfig][]) {
    for (const [runner, run] of [
      ["Fanout", throughFanout],
      ["p-limit + SDK", throughLoop],
    ] as const) {
      const r = await run(limits, `rl-${runner.replace(/\W/g, "")}-${name.replace(/\W/g, "")}-${Date.now()}`);
      rows.push(`| ${name} | ${runner} | ${r.succeeded}/${ITEMS} | ${r.failed} | ${r.secs.toFixed(1)} | ${r.calls} | ${r.rate_limited} |`);
      console.log(rows.at(-1));
    }
  }
} finally {
  await fanout.stop();
  await fake.close();
}
console.log(["| key | runner | items done | failed | wall (s) | calls | 429s |", "|---|---|---:|---:|---:|---:|---:|", ...rows].join("\n"));
