/**
 * `npm run bench:tracing [-- --runs 3]` — the cost of tracing (#55): Fanout's server CPU per item on
 * S2 (N=1,000, C=50, L=200 ms; as bench:floor measures it, the server's process tree) for a tenant
 * without a collector and one whose collector (PUT /v1/telemetry, the fake's OTLP endpoint) takes
 * every job's spans, runs alternating on one server after a warm-up of each.
 */
import { parseArgs } from "node:util";
import { call, newTenant } from "../test/e2e/harness/api.ts";
import { startFakeModelServer } from "../test/fake-model/server.ts";
import { startFanout, type FanoutServer } from "../test/e2e/harness/fanout-server.ts";
import { runThroughFanout } from "./fanout-run.ts";
import { treeCpuTotal } from "./memory.ts";

const { values } = parseArgs({ options: { runs: { type: "string", default: "3" } } });
const runs = Number(values.runs);
const workload = (tag: string) => ({ n: 1000, concurrency: 50, latencyMs: 200, tag });

async function cpuPerItem(server: FanoutServer, run: () => Promise<unknown>): Promise<number> {
  const before = treeCpuTotal(server.process.pid as number);
  await run();
  return treeCpuTotal(server.process.pid as number) - before; // CPU seconds per 1,000 items = ms per item
}

const fake = await startFakeModelServer();
const fanout = await startFanout({ vars: { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: "sk-bench" } });
try {
  const plain = (await newTenant(fanout.url)).key;
  const traced = (await newTenant(fanout.url)).key;
  const put = await call(fanout.url, "PUT", "/v1/telemetry", { token: traced, body: { otlp_endpoint: `${fake.url}/_fake/otlp/v1/traces` } });
  if (put.status !== 200) throw new Error(`PUT /v1/telemetry: ${put.status} ${JSON.stringify(put.body)}`);
  const job = (key: string, tag: string) => runThroughFanout(fanout.url, key, workload(tag));
  await job(plain, `tr-warm-p-${Date.now()}`);
  await job(traced, `tr-warm-t-${Date.now()}`);
  console.log("| run | without a collector (CPU ms / item) | with one (CPU ms / item) | more |");
  console.log("|---|---:|---:|---:|");
  for (let i = 1; i <= runs; i++) {
    const a = await cpuPerItem(fanout, () => job(plain, `tr-p${i}-${Date.now()}`));
    const b = await cpuPerItem(fanout, () => job(traced, `tr-t${i}-${Date.now()}`));
    console.log(`| ${i} | ${a.toFixed(2)} | ${b.toFixed(2)} | ${(((b - a) / a) * 100).toFixed(1)} % |`);
  }
} finally {
  await fanout.stop();
  await fake.close();
}
