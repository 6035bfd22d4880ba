/**
 * Runs one workload through Fanout over HTTP: POST /v1/map, time until MAP_COMPLETED arrives over
 * SSE, then fetch every result from /results and validate it like the baselines do.
 */
import { allResults, call, openEvents, readSse } from "../test/e2e/harness/api.ts";
import { items, MODEL, SCHEMA, TEMPLATE, type RunFigures, type Workload } from "./workload.ts";

export function mapBody(w: Workload, prefix = "") {
  const retries = w.maxRetries === undefined ? {} : { max_retries: w.maxRetries };
  return {
    inputs: items(w, prefix),
    prompt_template: TEMPLATE,
    output_schema: SCHEMA,
    model: `${w.provider ?? "openai"}/${MODEL}`,
    concurrency: w.concurrency,
    ...retries,
  };
}

export async function startJob(base: string, key: string, body: unknown): Promise<string> {
  const created = await call(base, "POST", "/v1/map", { token: key, body });
  if (created.status !== 202) throw new Error(`POST /v1/map: ${created.status} ${JSON.stringify(created.body)}`);
  return created.body.job_id;
}

/** Waits for MAP_COMPLETED on the job's stream; returns when the first result and the end arrived. */
export async function followJob(base: string, key: string, jobId: string, started: number) {
  let firstResultMs: number | null = null;
  const events = await readSse(await openEvents(base, key, jobId), {
    onEvent: (e) => {
      if (e.event === "MAP_ITEM_COMPLETED" && firstResultMs === null) firstResultMs = performance.now() - started;
    },
  });
  if (events.at(-1)?.event !== "MAP_COMPLETED") throw new Error("the stream ended without MAP_COMPLETED");
  return { firstResultMs, wallMs: performance.now() - started, completed: events.at(-1)?.data };
}

/** The job's figures, with `answeredMs`: how long the POST took to answer 202. */
export async function runThroughFanout(base: string, key: string, w: Workload): Promise<RunFigures & { attempts: number; answeredMs: number }> {
  const started = performance.now();
  const jobId = await startJob(base, key, mapBody(w));
  const answeredMs = performance.now() - started;
  const { firstResultMs, wallMs, completed } = await followJob(base, key, jobId, started);
  const results = await allResults(base, key, jobId);
  return {
    answeredMs,
    wallMs,
    firstResultMs,
    recorded: new Set(results.map((r) => r.index)).size,
    succeeded: results.filter((r) => r.success).length,
    attempts: completed.total_attempts,
  };
}
