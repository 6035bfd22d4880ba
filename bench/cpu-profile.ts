/**
 * `npm run bench:cpu [-- --pipeline]`: where the Worker's own CPU goes, by source module, in S2
 * (N=1,000, C=50, L=200 ms) or, with --pipeline, in S8's batch (500 elements at 50). A V8 CPU
 * profile of workerd's isolate is taken through wrangler dev's inspector while the job runs; each
 * sample's function is mapped back to its module through the markers esbuild leaves in the bundle
 * (`// src/engine/attempt.ts`), read from the inspector. Self time is reported per module and per
 * group (coordinator, call worker, engine, templates, output checks, provider SDKs, runtime), and
 * by the object whose code is on the stack.
 */
import { newTenant } from "../test/e2e/harness/api.ts";
import { startFakeModelServer } from "../test/fake-model/server.ts";
import { startFanout } from "../test/e2e/harness/fanout-server.ts";
import { runThroughFanout } from "./fanout-run.ts";
import { runPipeline } from "./pipeline-run.ts";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Talks to one inspector target over a WebSocket (Node 22's global WebSocket). */
async function inspector(url: string) {
  // wrangler's inspector proxy accepts DevTools' origin; undici's WebSocket can send it.
  const ws = new WebSocket(url, { headers: { origin: "https://devtools.devprod.cloudflare.dev" } } as unknown as string[]);
  await new Promise((resolve, reject) => {
    ws.addEventListener("open", resolve, { once: true });
    ws.addEventListener("error", reject, { once: true });
  });
  let next = 1;
  const waiting = new Map<number, (result: unknown) => void>();
  const listeners: ((method: string, params: any) => void)[] = [];
  ws.addEventListener("message", (e) => {
    const msg = JSON.parse(String(e.data)) as { id?: number; result?: unknown; method?: string; params?: unknown };
    if (msg.id !== undefined) waiting.get(msg.id)?.(msg.result);
    else if (msg.method) for (const listen of listeners) listen(msg.method, msg.params);
  });
  return {
    on: (listen: (method: string, params: any) => void) => listeners.push(listen),
    send: (method: string, params: Record<string, unknown> = {}) =>
      new Promise<any>((resolve) => {
        const id = next++;
        waiting.set(id, resolve);
        ws.send(JSON.stringify({ id, method, params }));
      }),
    close: () => ws.close(),
  };
}

/**
 * The bundle the isolate runs, as its inspector has it (a file under .wrangler/tmp could be an
 * earlier build's: a stale one maps every sample to the wrong module), with the module each line
 * belongs to.
 */
async function bundleModules(v8: Awaited<ReturnType<typeof inspector>>): Promise<{ moduleAt: (line: number) => string }> {
  const scripts: string[] = [];
  v8.on((method, params) => {
    if (method === "Debugger.scriptParsed" && String(params.url).endsWith("index.js")) scripts.push(params.scriptId);
  });
  await v8.send("Debugger.enable"); // reports every script already parsed
  const scriptId = scripts[0];
  if (scripts.length !== 1 || !scriptId) throw new Error(`the inspector reported ${scripts.length} index.js scripts, not one`);
  const { scriptSource } = (await v8.send("Debugger.getScriptSource", { scriptId })) as { scriptSource: string };
  await v8.send("Debugger.disable");
  const lines = scriptSource.split("\n");
  const starts: { line: number; module: string }[] = [];
  lines.forEach((text, i) => {
    const m = /^\/\/ (.+\.(?:ts|js|mjs|cjs))$/.exec(text);
    if (m) starts.push({ line: i, module: (m[1] as string).replace(/^.*node_modules\//, "node_modules/") });
  });
  return {
    moduleAt: (line) => {
      let lo = 0;
      let hi = starts.length - 1;
      let found = "(bundle prelude)";
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        const start = starts[mid] as { line: number; module: string };
        if (start.line <= line) {
          found = start.module;
          lo = mid + 1;
        } else hi = mid - 1;
      }
      return found;
    },
  };
}

const STORAGE = new Set([
  "(exec)",
  "(put)",
  "(toArray)",
  "(delete)",
  "(transactionSync)",
  "(one)",
  "(get)",
  "(next)",
  "(setAlarm)",
  "(getAlarm)",
  "(deleteAlarm)",
  "(set scheduledTime)",
  "(entries)",
  "(raw)",
]);
const D1_CLIENT = new Set(["(addAggregatedD1MetaToSpan)", "(aggregateD1Meta)", "(batch)", "(addD1MetaToSpan)", "(D1PreparedStatement)", "(D1Database)"]);

/** The object whose code a stack runs in, by the outermost frame of ours (storage and SDK calls count for their caller). */
function objectOf(module: string): string | null {
  if (module.includes("job-coordinator") || module.includes("durable-objects/coordinator/")) return "coordinator (one per job: the serial part)";
  if (module.includes("call-worker") || module.startsWith("src/engine/attempt") || module.startsWith("src/llm/")) return "call workers";
  if (module.includes("provider-limiter") || module.includes("worker-pool")) return "limiter and pool";
  if (module.includes("hono") || module.startsWith("src/routes") || module.startsWith("src/app") || module.startsWith("src/jobs/")) return "HTTP routes";
  return null;
}

function group(module: string): string {
  if (module.includes("job-coordinator") || module.includes("durable-objects/coordinator/")) return "coordinator";
  if (module.includes("call-worker")) return "call worker";
  if (module.startsWith("src/engine/") || module.startsWith("src/operators/")) return "engine and operators";
  if (module.startsWith("src/template/") || module.includes("@huggingface/jinja")) return "templates";
  if (module.startsWith("src/output/") || module.includes("@cfworker")) return "output checks";
  if (module.startsWith("src/llm/") || module.includes("node_modules/openai") || module.includes("@anthropic-ai")) return "provider call (SDK)";
  if (module.includes("hono") || module.startsWith("src/routes") || module.startsWith("src/app")) return "HTTP routes";
  if (module.startsWith("src/db/")) return "D1";
  if (STORAGE.has(module)) return "Durable Object storage (SQL, KV API, alarms)";
  if (D1_CLIENT.has(module)) return "D1 client";
  if (module === "(clearTimeout)" || module === "(setTimeout)" || module === "(Timeout)" || module === "(#constructTimer)") return "timers";
  if (module === "(garbage collector)") return "garbage collection";
  if (module === "(program)") return "V8 and runtime, unattributed";
  if (module.startsWith("(")) return "runtime built-ins (fetch, JSON, URL, streams…)";
  return "other";
}

const fake = await startFakeModelServer();
const server = await startFanout({ vars: { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: "sk-bench" } });
try {
  const { key } = await newTenant(server.url);
  // S2 (1,000 items at 50), or with --pipeline S8's batch (500 elements at 50, between two single calls).
  const pipeline = process.argv.includes("--pipeline");
  const items = pipeline ? 500 : 1000;
  const runOnce = async (tag: string) =>
    pipeline
      ? await runPipeline(server.url, key, { n: items, maxConcurrent: 50, latencyMs: 200, tag })
      : await runThroughFanout(server.url, key, { n: items, concurrency: 50, latencyMs: 200, tag });
  await runOnce(`cpu-warm-${Date.now()}`); // warm-up: code compiled, objects known
  const targets = (await (await fetch(`http://127.0.0.1:${server.inspectorPort}/json`)).json()) as { webSocketDebuggerUrl: string }[];
  const v8 = await inspector((targets[0] as { webSocketDebuggerUrl: string }).webSocketDebuggerUrl);
  await v8.send("Profiler.enable");
  await v8.send("Profiler.setSamplingInterval", { interval: 200 });
  await v8.send("Profiler.start");
  const run = await runOnce(`cpu-${Date.now()}`);
  const { profile } = (await v8.send("Profiler.stop")) as { profile: Profile };
  const { moduleAt } = await bundleModules(v8);
  v8.close();
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const moduleOf = (node: ProfileNode) => (node.callFrame.url.endsWith("index.js") ? moduleAt(node.callFrame.lineNumber) : "(native)");
  const owner = (id: number): string => {
    let found: string | null = null;
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) found = objectOf(moduleOf(byId.get(at) as ProfileNode)) ?? found;
    return found ?? "runtime, not under our code (event loop, GC, I/O)";
  };
  const byObject = new Map<string, number>();
  const inCoordinator = new Map<string, number>(); // self time by function, of the samples the coordinator owns
  const self = new Map<string, number>();
  const functions = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const node = byId.get(id) as ProfileNode;
    const us = profile.timeDeltas[i] ?? 0;
    const frame = node.callFrame;
    if (frame.functionName === "(idle)") return; // the isolate waiting: not CPU
    const object = owner(id);
    byObject.set(object, (byObject.get(object) ?? 0) + us);
    const module = frame.url.endsWith("index.js")
      ? moduleAt(frame.lineNumber)
      : frame.functionName.startsWith("(")
        ? frame.functionName
        : `(${frame.functionName || "native"})`;
    if (object.startsWith("coordinator")) {
      // A storage call is named with its caller, so the coordinator's SQL shows by statement.
      const caller = STORAGE.has(module) ? byId.get(parent.get(id) as number)?.callFrame.functionName : undefined;
      const fn = `${frame.functionName || "(anonymous)"} · ${module}${caller ? ` ← ${caller}` : ""}`;
      inCoordinator.set(fn, (inCoordinator.get(fn) ?? 0) + us);
    }
    self.set(module, (self.get(module) ?? 0) + us);
    const fn = `${frame.functionName || "(anonymous)"} · ${module}`;
    functions.set(fn, (functions.get(fn) ?? 0) + us);
    total += us;
  });
  const groups = new Map<string, number>();
  for (const [module, us] of self) groups.set(group(module), (groups.get(group(module)) ?? 0) + us);
  const ms = (us: number) => (us / 1000).toFixed(0);
  const perItem = (us: number) => (us / 1000 / items).toFixed(3);
  console.log(
    `${pipeline ? "S8 batch" : "S2"} run: ${(run.wallMs / 1000).toFixed(2)} s wall; isolate CPU (sampled, idle excluded): ${ms(total)} ms = ${perItem(total)} ms per item`,
  );
  console.log("\n| group | CPU (ms) | ms / item | share |\n|---|---:|---:|---:|");
  for (const [name, us] of [...groups].sort((a, b) => b[1] - a[1]))
    console.log(`| ${name} | ${ms(us)} | ${perItem(us)} | ${((us / total) * 100).toFixed(1)} % |`);
  console.log("\n| object (inclusive: its storage, SDK and runtime calls) | CPU (ms) | ms / item |\n|---|---:|---:|");
  for (const [name, us] of [...byObject].sort((a, b) => b[1] - a[1])) console.log(`| ${name} | ${ms(us)} | ${perItem(us)} |`);
  const coordinator = [...byObject].find(([name]) => name.startsWith("coordinator"))?.[1] ?? 0;
  if (coordinator > 0) console.log(`\nOne coordinator at this cost sustains ~${Math.round(1000 / (coordinator / 1000 / items))} items/s.`);
  console.log("\n| in the coordinator: function · module | CPU (ms) | ms / item |\n|---|---:|---:|");
  for (const [name, us] of [...inCoordinator].sort((a, b) => b[1] - a[1]).slice(0, 20)) console.log(`| ${name} | ${ms(us)} | ${perItem(us)} |`);
  console.log("\n| module | CPU (ms) | ms / item |\n|---|---:|---:|");
  for (const [name, us] of [...self]
    .filter(([n]) => !n.startsWith("("))
    .sort((a, b) => b[1] - a[1])
    .slice(0, 20))
    console.log(`| ${name} | ${ms(us)} | ${perItem(us)} |`);
  console.log("\n| function · module | CPU (ms) | ms / item |\n|---|---:|---:|");
  for (const [name, us] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`| ${name} | ${ms(us)} | ${perItem(us)} |`);
} finally {
  await server.stop();
  await fake.close();
}
