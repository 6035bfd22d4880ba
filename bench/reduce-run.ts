/**
 * S6, the fold: POST /v1/reduce over N inputs whose inner calls take L and reductions take R
 * (fake model latencies), at concurrency C. Inner tasks run ahead in parallel, reductions in
 * order, so the ideal is N·R + L (the first inner call, then every reduction back to back); a
 * loop that runs inner and reduction in turn takes N·(L + R).
 */
import { allResults, call, openEvents, readSse } from "../test/e2e/harness/api.ts";

export interface FoldWorkload {
  n: number;
  concurrency: number;
  innerMs: number;
  reductionMs: number;
  tag: string;
}

const SCHEMA = { type: "object", properties: { echo: { type: "string" }, length: { type: "integer" } }, required: ["echo", "length"] };

export async function runFold(base: string, key: string, w: FoldWorkload) {
  const body = {
    inputs: Array.from({ length: w.n }, (_, i) => `doc ${i}`),
    inner_task: { prompt_template: `Summarise {{ item }} <<fake tag=${w.tag} id=i{{ index }} ms=${w.innerMs}>>`, output_schema: SCHEMA },
    reduction_task: {
      prompt_template: `{{ (accumulator.length if accumulator else 0) + 1 }} <<fake tag=${w.tag} id=r{{ index }} ms=${w.reductionMs}>> {{ current_result.echo }}`,
      output_schema: SCHEMA,
    },
    model: "openai/gpt-6-luna",
    concurrency: w.concurrency,
  };
  const started = performance.now();
  const created = await call(base, "POST", "/v1/reduce", { token: key, body });
  if (created.status !== 202) throw new Error(`POST /v1/reduce: ${created.status} ${JSON.stringify(created.body)}`);
  const events = await readSse(await openEvents(base, key, created.body.job_id));
  const wallMs = performance.now() - started;
  const end = events.at(-1);
  if (end?.event !== "MAP_COMPLETED" || end.data.status !== "completed") throw new Error(`the fold did not complete: ${JSON.stringify(end)}`);
  const reductions = await allResults(base, key, created.body.job_id, "&stage=reduction");
  const order = events.filter((e) => e.event === "TASK_COMPLETED" && e.data.stage === "reduction").map((e) => e.data.index);
  const inOrder = order.every((index, i) => index === i);
  return { wallMs, succeeded: reductions.filter((r) => r.success).length, attempts: end.data.total_attempts as number, inOrder };
}
