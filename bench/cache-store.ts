/**
 * `npm run bench:cache`: the response cache's candidate stores measured inside workerd (a worker
 * of its own under `wrangler dev`, in a temporary folder): D1, KV and the Cache API, each storing N answers
 * of ~2 KB, reading them back one by one (a worker's lookup before a call) and all at once (a
 * dry run's count). Writes the table into BENCHMARKS.md between `bench-cache-store` markers.
 * Local figures measure each binding's own cost on this machine; the platform's properties that
 * decide the choice (consistency, where data lives) are in BENCHMARKS.md next to the table.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { freePort, ROOT } from "../test/e2e/harness/fanout-server.ts";

const N = 500;
const ANSWER = JSON.stringify({ summary: "x".repeat(2_000) });

// Runs inside workerd: times N writes, N single reads and one bulk read per store.
const script = `
const N = ${N};
const ANSWER = ${JSON.stringify(ANSWER)};
const key = (i) => "k" + String(i).padStart(6, "0");
async function time(fn) { const t = Date.now(); await fn(); return Date.now() - t; }
export default {
  async fetch(request, env) {
    const store = new URL(request.url).searchParams.get("store");
    if (!store) return new Response("ok");
    await env.DB.exec("CREATE TABLE IF NOT EXISTS c (tenant_id TEXT, key TEXT, text TEXT, created_ms INTEGER, PRIMARY KEY (tenant_id, key))");
    const cache = await caches.open("answers");
    const url = (i) => "https://cache.local/t1/" + key(i);
    const ops = {
      d1: {
        put: (i) => env.DB.prepare("INSERT OR REPLACE INTO c VALUES ('t1', ?, ?, ?)").bind(key(i), ANSWER, Date.now()).run(),
        get: (i) => env.DB.prepare("SELECT text FROM c WHERE tenant_id = 't1' AND key = ? AND created_ms >= 0").bind(key(i)).first(),
        bulk: async () => {
          for (let at = 0; at < N; at += 90) {
            const keys = Array.from({ length: Math.min(90, N - at) }, (_, j) => key(at + j));
            await env.DB.prepare("SELECT key FROM c WHERE tenant_id = 't1' AND key IN (" + keys.map(() => "?").join(",") + ")").bind(...keys).all();
          }
        },
      },
      kv: {
        put: (i) => env.KV.put("t1:" + key(i), ANSWER, { expirationTtl: 86400 }),
        get: (i) => env.KV.get("t1:" + key(i)),
        bulk: async () => {
          for (let at = 0; at < N; at += 100) await env.KV.get(Array.from({ length: Math.min(100, N - at) }, (_, j) => "t1:" + key(at + j)));
        },
      },
      cache: {
        put: (i) => cache.put(url(i), new Response(ANSWER, { headers: { "cache-control": "max-age=86400" } })),
        get: async (i) => { const r = await cache.match(url(i)); return r ? r.text() : null; },
        bulk: async () => { for (let i = 0; i < N; i++) await cache.match(url(i)); },
      },
    }[store];
    const put = await time(async () => { for (let i = 0; i < N; i++) await ops.put(i); });
    let hits = 0;
    const get = await time(async () => { for (let i = 0; i < N; i++) if (await ops.get(i)) hits++; });
    const bulk = await time(ops.bulk);
    return Response.json({ put, get, bulk, hits });
  },
};`;

interface Figures {
  put: number;
  get: number;
  bulk: number;
  hits: number;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "fanout-cache-bench-"));
  writeFileSync(join(dir, "worker.js"), script);
  const config = {
    name: "cache-bench",
    main: "worker.js",
    compatibility_date: "2026-10-01",
    d1_databases: [{ binding: "DB", database_name: "bench", database_id: "00000000-0000-0000-0000-000000000000" }],
    kv_namespaces: [{ binding: "KV", id: "bench" }],
  };
  writeFileSync(join(dir, "wrangler.json"), JSON.stringify(config));
  const port = await freePort();
  const child = spawn(
    join(ROOT, "node_modules/.bin/wrangler"),
    ["dev", "--ip", "127.0.0.1", "--port", String(port), "--inspector-port", String(await freePort()), "--persist-to", join(dir, "state")],
    {
      cwd: dir,
      env: {
        ...process.env,
        WRANGLER_SEND_METRICS: "false",
        X_LOCAL_OBSERVABILITY: "false",
        CI: "true",
        PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ""}`,
      },
      stdio: "ignore",
      detached: true,
    },
  );
  const url = `http://127.0.0.1:${port}`;
  try {
    for (let tries = 0; ; tries++) {
      if (tries > 240) throw new Error("wrangler dev did not start");
      if (
        await fetch(url).then(
          (r) => r.ok,
          () => false,
        )
      )
        break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const rows: string[] = [];
    for (const store of ["d1", "kv", "cache"]) {
      const f = (await (await fetch(`${url}/?store=${store}`)).json()) as Figures;
      const per = (ms: number) => (ms / N).toFixed(2);
      rows.push(`| ${store} | ${N} | ${per(f.put)} | ${per(f.get)} | ${f.hits}/${N} | ${f.bulk} |`);
      console.log(store, f);
    }
    const block = [
      "<!-- bench-cache-store:start -->",
      `Run on ${new Date().toISOString().slice(0, 10)} with \`npm run bench:cache\` on ${cpus().length} cores (${cpus()[0]?.model.trim()}), ${Math.round(totalmem() / 2 ** 30)} GiB, wrangler dev ${wranglerVersion()}; one worker, sequential operations.`,
      "",
      "| store | answers (~2 KB) | write (ms each) | lookup (ms each) | hits | check of all N at once (ms) |",
      "|---|---:|---:|---:|---:|---:|",
      ...rows,
      "<!-- bench-cache-store:end -->",
    ].join("\n");
    const path = `${ROOT}/BENCHMARKS.md`;
    writeFileSync(path, readFileSync(path, "utf8").replace(/<!-- bench-cache-store:start -->[\s\S]*<!-- bench-cache-store:end -->/, block));
  } finally {
    if (child.pid !== undefined) process.kill(-child.pid, "SIGTERM");
    await new Promise((r) => setTimeout(r, 500));
    rmSync(dir, { recursive: true, force: true });
  }
}

function wranglerVersion(): string {
  return (JSON.parse(readFileSync(`${ROOT}/node_modules/wrangler/package.json`, "utf8")) as { version: string }).version;
}

await main();
