/** One fake model server and one Fanout (`wrangler dev`) for every e2e test file. */
import { writeFileSync } from "node:fs";
import type { TestProject } from "vitest/node";
import { startFakeModelServer, type FakeModelServer } from "../fake-model/server.ts";
import { startFanout, type FanoutServer } from "./harness/fanout-server.ts";

let fake: FakeModelServer | undefined;
let fanout: FanoutServer | undefined;

export async function setup(project: TestProject): Promise<void> {
  fake = await startFakeModelServer();
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
  await fake?.close();
}

declare module "vitest" {
  export interface ProvidedContext {
    fanoutUrl: string;
    fakeUrl: string;
  }
}
