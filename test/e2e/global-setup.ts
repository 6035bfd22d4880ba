/** One fake model server and one Fanout (`wrangler dev`) for every e2e test file. */
import { writeFileSync } from "node:fs";
import type { TestProject } from "vitest/node";
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { startFanout, type FanoutServer } from "./harness/fanout-server.ts";

let fake: { url: string; process: ChildProcess } | undefined;

const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);

/** Models of the test deployment that retire (model-lifecycle.e2e.test.ts): one shut down long ago, one within 30 days. */
const TEST_RETIREMENTS = {
  "openai/e2e-retired": { shutdown_date: "2001-01-01", replacement: "openai/gpt-6-luna" },
  "openai/e2e-retiring": { shutdown_date: inDays(10), replacement: null },
};

/** The fake model server in a process of its own (../fake-model/main.ts): its URL once it listens. */
async function startFake(): Promise<{ url: string; process: ChildProcess }> {
  const child = spawn(process.execPath, [fileURLToPath(new URL("../fake-model/main.ts", import.meta.url))], { stdio: ["pipe", "pipe", "inherit"] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`the fake model server exited (${code}) before it listened: ${out}`)));
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split("\n")[0] as string;
      if (out.includes("\n")) resolve((JSON.parse(line) as { url: string }).url);
    });
  });
  child.removeAllListeners("exit");
  return { url, process: child };
}
let fanout: FanoutServer | undefined;

export async function setup(project: TestProject): Promise<void> {
  fake = await startFake();
  fanout = await startFanout({
    vars: {
      OPENAI_BASE_URL: `${fake.url}/v1`,
      OPENAI_API_KEY: "sk-env-openai-key",
      ANTHROPIC_BASE_URL: fake.url,
      ANTHROPIC_API_KEY: "sk-ant-env-key",
      OPENAI_COMPATIBLE_BASE_URL: `${fake.url}/v1`,
      MAX_ITEMS_PER_JOB: "10000",
      MAX_REQUEST_BYTES: String(8 * 1024 * 1024),
      WAIT_LIMIT_SECS: "20",
      SSE_KEEPALIVE_SECS: "1",
      WEBHOOK_RETRY_SCHEDULE_SECS: "1,1,2",
      BATCH_POLL_MS: "100", // provider batches polled every 100 ms at first (the fake's end after 300 ms)
      BATCH_CANCEL_WAIT_MS: "8000", // a cancelled batch that has not ended after 8 s is polled no more (the slowest cancel the tests script is 4 s)
      MODEL_RETIREMENTS: JSON.stringify(TEST_RETIREMENTS),
    },
  });
  project.provide("fanoutUrl", fanout.url);
  project.provide("fakeUrl", fake.url);
}

export async function teardown(): Promise<void> {
  // Debugging aid: the server's output, printed (E2E_SERVER_LOGS=1) or written to a file (a path).
  const logs = process.env.E2E_SERVER_LOGS;
  if (logs === "1") console.log(fanout?.logs());
  else if (logs) writeFileSync(logs, fanout?.logs() ?? "");
  await fanout?.stop();
  if (fake && fake.process.exitCode === null) {
    const exited = new Promise((done) => fake?.process.once("exit", done));
    fake.process.kill();
    await exited;
  }
}

declare module "vitest" {
  export interface ProvidedContext {
    fanoutUrl: string;
    fakeUrl: string;
  }
}
