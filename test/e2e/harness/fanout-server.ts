/**
 * Starts Fanout with `wrangler dev` on a free port with local state in a folder of its own
 * (migrations applied first), and stops it by PID. Used by the e2e global setup, by tests that
 * restart the server mid-job, and by the benchmarks.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { removeTempDir, tempDir } from "./temp-dir.ts";

export const ROOT = resolve(import.meta.dirname, "../../..");
const WRANGLER = join(ROOT, "node_modules/.bin/wrangler");
const QUIET_ENV = {
  WRANGLER_SEND_METRICS: "false",
  X_LOCAL_OBSERVABILITY: "false", // traces slow local Durable Objects down 2x
  CLOUDFLARE_CF_FETCH_ENABLED: "false", // no lookup of Request.cf data (offline: a DNS error in the log)
  CI: "true",
  NO_COLOR: "1",
  // wrangler needs Node >= 22.12: run it with the Node running us (the project's node@22).
  PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ""}`,
};
const READY_TIMEOUT_MS = 90_000;

/** Binds `port` (0: any free one) on 127.0.0.1 and lets it go: the port, or null when it is taken. */
function tryPort(port: number): Promise<number | null> {
  return new Promise((resolvePort) => {
    const server = createServer();
    server.unref();
    server.once("error", () => resolvePort(null));
    server.listen(port, "127.0.0.1", () => {
      const address = server.address();
      const bound = typeof address === "object" && address ? address.port : null;
      server.close(() => resolvePort(bound));
    });
  });
}

export async function freePort(): Promise<number> {
  const port = await tryPort(0);
  if (port === null) throw new Error("no free port on 127.0.0.1");
  return port;
}

/** A restart on the port of a server just killed: its runtime can hold the port a moment after wrangler has exited. */
async function untilFree(port: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while ((await tryPort(port)) === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
}

function killGroup(group: number, signal: NodeJS.Signals): void {
  try {
    process.kill(group, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ESRCH") throw err; // already gone
  }
}

export interface FanoutServer {
  url: string;
  port: number;
  inspectorPort: number; // workerd's V8 inspector (bench/cpu-profile.ts)
  persistDir: string;
  process: ChildProcess;
  logs: () => string;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export interface FanoutOptions {
  vars?: Record<string, string>;
  persistDir?: string;
  port?: number;
  /** Another Worker's wrangler config (a benchmark's: bench/floor/), run the same way; its state has no D1 schema to apply. */
  config?: string;
}

function applyMigrations(persistDir: string): void {
  const result = spawnSync(WRANGLER, ["d1", "migrations", "apply", "DB", "--local", "--persist-to", persistDir], {
    cwd: ROOT,
    env: { ...process.env, ...QUIET_ENV },
    encoding: "utf8",
  });
  if (result.status !== 0) throw new Error(`migrations failed:\n${result.stdout}\n${result.stderr}`);
}

const MIGRATIONS = join(ROOT, "migrations");
const MIGRATED = "fanout-migrated"; // written last into a template folder: the migrations all applied

/**
 * A folder of local state with every migration applied, made once per set of migrations and
 * wrangler version and kept in the system's temp folder: `wrangler d1 migrations apply` takes
 * ~9 s, a copy of its result milliseconds. Made aside and renamed into place, so processes
 * starting servers at the same time never see half of one.
 */
function migratedTemplate(): string {
  const digest = createHash("sha256").update(readFileSync(join(ROOT, "node_modules/wrangler/package.json")));
  for (const name of readdirSync(MIGRATIONS).sort()) digest.update(name).update(readFileSync(join(MIGRATIONS, name)));
  const template = join(tmpdir(), `fanout-state-${digest.digest("hex").slice(0, 16)}`);
  if (existsSync(join(template, MIGRATED))) return template;
  const work = mkdtempSync(`${template}-making-`);
  applyMigrations(work);
  writeFileSync(join(work, MIGRATED), "");
  try {
    renameSync(work, template);
  } catch {
    rmSync(work, { recursive: true, force: true }); // another process put its template there first
  }
  return template;
}

/** Gives `persistDir` the migrated schema unless it holds state already (a restart's, or a benchmark's). */
function withSchema(persistDir: string): void {
  if (existsSync(join(persistDir, "v3/d1"))) return;
  cpSync(migratedTemplate(), persistDir, { recursive: true, filter: (source) => !source.endsWith(MIGRATED) });
}

/** wrangler dev could not bind a port it was given: another process took it after we found it free. */
class PortTaken extends Error {}
const LAUNCHES = 3;

export async function startFanout(options: FanoutOptions = {}): Promise<FanoutServer> {
  const persistDir = options.persistDir ?? tempDir("fanout-e2e-");
  if (options.config === undefined) withSchema(persistDir);
  for (let launch = 1; ; launch++) {
    if (options.port !== undefined) await untilFree(options.port);
    const port = options.port ?? (await freePort());
    try {
      return await launchOn(port, persistDir, options.vars ?? {}, options.config);
    } catch (err) {
      // A free port is only free until somebody binds it: test files running in parallel pick ports
      // too, and the runtime binds some of its own. Start again (on a new port, unless one was asked).
      if (!(err instanceof PortTaken) || launch === LAUNCHES) throw err;
    }
  }
}

async function launchOn(port: number, persistDir: string, extraVars: Record<string, string>, config: string | undefined): Promise<FanoutServer> {
  const inspectorPort = await freePort();
  const vars = Object.entries({ ENVIRONMENT: "development", ...extraVars }).flatMap(([k, v]) => ["--var", `${k}:${v}`]);
  const child = spawn(
    WRANGLER,
    [
      "dev",
      ...(config ? ["-c", config] : []),
      "--ip",
      "127.0.0.1",
      "--port",
      String(port),
      "--inspector-port",
      String(inspectorPort),
      "--persist-to",
      persistDir,
      ...vars,
    ],
    { cwd: ROOT, env: { ...process.env, ...QUIET_ENV }, stdio: ["ignore", "pipe", "pipe"], detached: true },
  );
  let output = "";
  child.stdout?.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (output += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null) {
      if (output.includes("Address already in use")) throw new PortTaken(`wrangler dev could not bind its ports:\n${output}`);
      throw new Error(`wrangler dev exited early:\n${output}`);
    }
    try {
      const res = await fetch(`${url}/healthz`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`wrangler dev did not start in time:\n${output}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    url,
    port,
    inspectorPort,
    persistDir,
    process: child,
    logs: () => output,
    stop: (signal: NodeJS.Signals = "SIGTERM") =>
      new Promise<void>((done) => {
        const exited = () => child.exitCode !== null || child.signalCode !== null;
        const finish = () => {
          // Killed, it leaves its state as a crash would (a restart test starts on it again); stopped, its state goes.
          if (signal !== "SIGKILL") removeTempDir(persistDir);
          done();
        };
        if (exited() || child.pid === undefined) return finish();
        const group = -child.pid; // the whole process group: wrangler and its workerd
        child.once("exit", finish);
        killGroup(group, signal);
        setTimeout(() => {
          if (!exited()) killGroup(group, "SIGKILL");
        }, 5_000).unref();
      }),
  };
}
