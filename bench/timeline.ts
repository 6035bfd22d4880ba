/**
 * `npm run bench:timeline [-- --n 2000 --concurrency 500 --latency 1000 --jitter 0 --bucket 250 --idle 0]`:
 * one `/v1/map` job through Fanout (after a warm-up job of the same tenant at the same
 * concurrency), and for each time bucket from its POST: how many model calls reached the fake
 * model server, and how busy workerd was (CPU time over the bucket; its one thread runs every
 * object locally). Shows whether a job's calls go out in waves, and what the thread does between
 * them. With `--jitter J`, the calls' latencies spread evenly over L ± J (mean L), as a provider's
 * do. With `--idle S`, the job starts S seconds after the warm-up: past ~10 s the runtime has
 * dropped the tenant's idle worker objects from memory, and the first calls wait for them to be
 * made again (a cold start, as for a tenant's first job after a pause).
 */
import { newTenant } from "../test/e2e/harness/api.ts";
import { startFakeModelServer } from "../test/fake-model/server.ts";
import { startFanout } from "../test/e2e/harness/fanout-server.ts";
import { runThroughFanout } from "./fanout-run.ts";
import { treeCpu } from "./memory.ts";

function option(name: string, fallback: number, least = 1): number {
  const i = process.argv.indexOf(`--${name}`);
  const value = i > 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isInteger(value) || value < least) throw new Error(`--${name} takes a whole number of at least ${least}`);
  return value;
}

const n = option("n", 2000);
const concurrency = option("concurrency", 500);
const latencyMs = option("latency", 1000);
const jitterMs = option("jitter", 0, 0);
const bucketMs = option("bucket", 250);
const idleSecs = option("idle", 0, 0);
if (jitterMs >= latencyMs) throw new Error("--jitter must be below --latency");

const fake = await startFakeModelServer();
const server = await startFanout({ vars: { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: "sk-bench" } });
try {
  const { key } = await newTenant(server.url);
  await runThroughFanout(server.url, key, { n: concurrency * 2, concurrency, latencyMs: 50, tag: `timeline-warm-${Date.now()}` });
  await new Promise((resolve) => setTimeout(resolve, idleSecs * 1000));
  const pid = server.process.pid as number;
  const workerdCpu = () => treeCpu(pid).get("workerd") ?? 0;
  const busy: number[] = [];
  let last = workerdCpu();
  const sampler = setInterval(() => {
    const now = workerdCpu();
    busy.push(now - last);
    last = now;
  }, bucketMs);
  const tag = `timeline-${Date.now()}`;
  const posted = Date.now();
  const run = await runThroughFanout(server.url, key, { n, concurrency, latencyMs, jitterMs, tag });
  clearInterval(sampler);
  const { times } = (await (await fetch(`${fake.url}/_fake/stats?tag=${tag}`)).json()) as { times: number[] };
  const calls: number[] = [];
  for (const t of times) {
    const b = Math.floor((t - posted) / bucketMs);
    calls[b] = (calls[b] ?? 0) + 1;
  }
  const ideal = Math.ceil(n / concurrency) * latencyMs;
  const firstCallMs = times.length > 0 ? Math.min(...times) - posted : null;
  console.log(
    `N=${n} C=${concurrency} L=${latencyMs}${jitterMs ? ` ± ${jitterMs}` : ""} ms${idleSecs ? `, ${idleSecs} s after the warm-up` : ""}: wall ${(run.wallMs / 1000).toFixed(2)} s (ideal ${(ideal / 1000).toFixed(2)} s), POST answered ${run.answeredMs.toFixed(0)} ms, first call ${firstCallMs} ms, first result ${((run.firstResultMs ?? 0) / 1000).toFixed(2)} s, ${run.succeeded} succeeded`,
  );
  console.log(`\n| from the POST (s) | calls sent | workerd busy |\n|---:|---:|---:|`);
  for (let b = 0; b < Math.max(calls.length, busy.length); b++) {
    console.log(`| ${((b * bucketMs) / 1000).toFixed(2)} | ${calls[b] ?? 0} | ${Math.round(((busy[b] ?? 0) * 1000 * 100) / bucketMs)} % |`);
  }
} finally {
  await server.stop();
  await fake.close();
}
