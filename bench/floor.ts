/**
 * `npm run bench:floor [-- --runs 3]`: Fanout's server CPU per item on S2 (N=1,000, C=50,
 * L=200 ms) beside the durability floor's (bench/floor/worker.ts: a coordinator's task table, a
 * call object per slot storing its outcome before its report, a report's answer carrying the next
 * task, and nothing else), each on its own `wrangler dev` against the same fake model server, runs
 * alternating after a warm-up of each. CPU is workerd's own (`/proc`: the runtime that runs both
 * Workers), and beside it the whole process tree as in bench:profile (wrangler's Node process and
 * its esbuild watcher idle through a run at 0.01–0.2 ms per item, differently on each side: noise,
 * not either Worker's work). What Fanout costs above the floor is its own work; the floor is what
 * this runtime asks of one call made durably. The last lines are the means over the runs and their
 * standard deviations.
 */
import { parseArgs } from "node:util";
import { newTenant } from "../test/e2e/harness/api.ts";
import { startFakeModelServer } from "../test/fake-model/server.ts";
import { startFanout, type FanoutServer } from "../test/e2e/harness/fanout-server.ts";
import { runThroughFanout } from "./fanout-run.ts";
import { treeCpu } from "./memory.ts";
import { items, MODEL, renderPrompt, type Workload } from "./workload.ts";
import { ALL_PARTS, type Parts } from "./floor/parts.ts";

const { values } = parseArgs({ options: { runs: { type: "string", default: "3" }, parts: { type: "boolean", default: false } } });
const runs = Number(values.runs);
const workload = (tag: string): Workload => ({ n: 1000, concurrency: 50, latencyMs: 200, tag });

/** CPU seconds so far: workerd's, and the server's whole process tree's. */
function cpuOf(server: FanoutServer): { workerd: number; tree: number } {
  const byName = treeCpu(server.process.pid as number);
  return { workerd: byName.get("workerd") ?? 0, tree: [...byName.values()].reduce((a, b) => a + b, 0) };
}

interface Measured {
  wallMs: number;
  cpuMsPerItem: number; // workerd's
  treeMsPerItem: number;
}

async function measured(server: FanoutServer, run: () => Promise<number>): Promise<Measured> {
  const before = cpuOf(server);
  const wallMs = await run();
  const after = cpuOf(server);
  // CPU seconds per 1,000 items = ms per item
  return { wallMs, cpuMsPerItem: after.workerd - before.workerd, treeMsPerItem: after.tree - before.tree };
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const sd = (xs: number[]) => Math.sqrt(xs.reduce((a, x) => a + (x - mean(xs)) ** 2, 0) / Math.max(1, xs.length - 1));
const stat = (xs: number[]) => `${mean(xs).toFixed(2)} ± ${sd(xs).toFixed(2)}`;

async function floorJob(server: FanoutServer, modelUrl: string, tag: string, parts: Parts = ALL_PARTS): Promise<number> {
  const w = workload(tag);
  const started = performance.now();
  const prompts = items(w).map(renderPrompt);
  const start = await fetch(`${server.url}/start?job=${tag}`, {
    method: "POST",
    body: JSON.stringify({ model: MODEL, modelUrl, prompts, concurrency: w.concurrency, parts }),
  });
  if (!start.ok) throw new Error(`the floor's job did not start: ${start.status} ${await start.text()}`);
  const waited = await fetch(`${server.url}/wait?job=${tag}`);
  const { done } = (await waited.json()) as { done: number };
  if (done !== w.n) throw new Error(`the floor's job ended with ${done} of ${w.n} done`);
  return performance.now() - started;
}

const fake = await startFakeModelServer();
const fanout = await startFanout({ vars: { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: "sk-bench" } });
const floor = await startFanout({ config: "bench/floor/wrangler.toml" });
try {
  const { key } = await newTenant(fanout.url);
  const viaFanout = async (tag: string) => (await runThroughFanout(fanout.url, key, workload(tag))).wallMs;
  const viaFloor = (tag: string, parts?: Parts) => floorJob(floor, `${fake.url}/v1/chat/completions`, tag, parts);
  await viaFanout(`floor-warm-${Date.now()}`);
  await viaFloor(`floor-warm-${Date.now()}`);
  console.log(
    "| run | Fanout wall (s) | Fanout workerd CPU ms / item | floor wall (s) | floor workerd CPU ms / item | Fanout − floor (ms / item) | the same, process trees |",
  );
  console.log("|---|---:|---:|---:|---:|---:|---:|");
  const diffs: number[] = [];
  const treeDiffs: number[] = [];
  for (let i = 1; i <= runs; i++) {
    const a = await measured(fanout, () => viaFanout(`floor-f${i}-${Date.now()}`));
    const b = await measured(floor, () => viaFloor(`floor-b${i}-${Date.now()}`));
    diffs.push(a.cpuMsPerItem - b.cpuMsPerItem);
    treeDiffs.push(a.treeMsPerItem - b.treeMsPerItem);
    const cells = [a.wallMs / 1000, a.cpuMsPerItem, b.wallMs / 1000, b.cpuMsPerItem, a.cpuMsPerItem - b.cpuMsPerItem, a.treeMsPerItem - b.treeMsPerItem];
    console.log(`| ${i} | ${cells.map((x) => x.toFixed(2)).join(" | ")} |`);
  }
  console.log(`\nFanout − floor over ${runs} runs, workerd: ${stat(diffs)} ms per item; process trees: ${stat(treeDiffs)}`);
  if (values.parts) {
    // The floor's parts, each taken away in turn (cumulatively), the full floor first again.
    const variants: [string, Parts][] = [
      ["the floor", ALL_PARTS],
      ["without the call object's store", { ...ALL_PARTS, store: false }],
      ["without the store and the coordinator's SQL", { store: false, sql: false, report: true }],
      ["calls only (no store, no SQL, one report per slot)", { store: false, sql: false, report: false }],
    ];
    console.log("\n| floor variant | wall (s) | CPU ms / item (runs) |");
    console.log("|---|---:|---:|");
    for (const [label, parts] of variants) {
      const results = [];
      for (let i = 1; i <= runs; i++) results.push(await measured(floor, () => viaFloor(`floor-${Object.values(parts).join("")}-${i}-${Date.now()}`, parts)));
      console.log(`| ${label} | ${(results[0].wallMs / 1000).toFixed(2)} | ${results.map((r) => r.cpuMsPerItem.toFixed(2)).join(", ")} |`);
    }
  }
} finally {
  await Promise.all([fanout.stop(), floor.stop()]);
  await fake.close();
}
