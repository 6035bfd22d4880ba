/**
 * `npm run bench:profile`: where S2's time goes. Runs S2 (N=1,000, C=50, L=200 ms) through Fanout
 * in variants that remove one cost at a time and reports wall time and the server's CPU seconds:
 * - baseline: as in `npm run bench` (local state on disk, SSE subscriber);
 * - no SSE: the client polls GET /v1/jobs/{id} instead of following the event stream;
 * - tmpfs: local state in /dev/shm, so storage commits cost no disk sync.
 */
import { call, newTenant } from "../test/e2e/harness/api.ts";
import { startFakeModelServer } from "../test/fake-model/server.ts";
import { startFanout } from "../test/e2e/harness/fanout-server.ts";
import { mapBody, runThroughFanout, startJob } from "./fanout-run.ts";
import { treeCpuTotal } from "./memory.ts";
import { tempDir } from "../test/e2e/harness/temp-dir.ts";

const fake = await startFakeModelServer();
const vars = { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: "sk-bench" };
const w = (tag: string) => ({ n: 1000, concurrency: 50, latencyMs: 200, tag });

async function measure(label: string, persistDir: string | undefined, run: (base: string, key: string) => Promise<number>): Promise<void> {
  const server = await startFanout({ vars, persistDir });
  try {
    const { key } = await newTenant(server.url);
    await run(server.url, key); // warm-up
    const pid = server.process.pid as number;
    const before = treeCpuTotal(pid);
    const wallMs = await run(server.url, key);
    const cpu = treeCpuTotal(pid) - before;
    console.log(`| ${label} | ${(wallMs / 1000).toFixed(2)} | ${(4000 / wallMs).toFixed(2)} | ${cpu.toFixed(2)} | ${((cpu * 1000) / 1000).toFixed(2)} |`);
  } finally {
    await server.stop();
  }
}

const viaSse = async (base: string, key: string) => (await runThroughFanout(base, key, w(`p-sse-${Date.now()}`))).wallMs;
const viaPolling = async (base: string, key: string) => {
  const started = performance.now();
  const jobId = await startJob(base, key, mapBody(w(`p-poll-${Date.now()}`)));
  for (;;) {
    const job = await call(base, "GET", `/v1/jobs/${jobId}`, { token: key });
    if (job.body.status === "completed") return performance.now() - started;
    await new Promise((r) => setTimeout(r, 50));
  }
};

console.log("| variant | wall (s) | efficiency | server CPU (s) | CPU ms / item |");
console.log("|---|---:|---:|---:|---:|");
try {
  await measure("baseline (disk, SSE)", undefined, viaSse);
  await measure("no SSE subscriber (polling)", undefined, viaPolling);
  await measure("tmpfs state (no disk sync)", tempDir("fanout-profile-", "/dev/shm"), viaSse);
} finally {
  await fake.close();
}
