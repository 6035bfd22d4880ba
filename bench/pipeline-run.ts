/**
 * S8, a pipeline: three steps, the middle one a batch of N elements at `max_concurrent` M, every
 * model call taking L (fake latency). The ideal is the critical path: L, then ceil(N/M)·L for the
 * batch, then L.
 */
import { call, openEvents, readSse } from "../test/e2e/harness/api.ts";

export interface PipelineWorkload {
  n: number;
  maxConcurrent: number;
  latencyMs: number;
  tag: string;
}

const SCHEMA = { type: "object", properties: { echo: { type: "string" }, length: { type: "integer" } }, required: ["echo", "length"] };

export const pipelineIdealMs = (w: PipelineWorkload): number => (2 + Math.ceil(w.n / w.maxConcurrent)) * w.latencyMs;

export async function runPipeline(base: string, key: string, w: PipelineWorkload) {
  const fake = (id: string) => `<<fake tag=${w.tag} id=${id} ms=${w.latencyMs}>>`;
  const body = {
    model: "openai/gpt-6-luna",
    concurrency: w.maxConcurrent,
    inputs: { items: Array.from({ length: w.n }, (_, i) => `item ${i}`) },
    steps: [
      { id: "plan", type: "llm", prompt_template: `Plan the work ${fake("plan")}`, output_schema: SCHEMA },
      {
        id: "each",
        type: "llm",
        batch: { items: "${items}", max_concurrent: w.maxConcurrent },
        prompt_template: `{{ plan.echo }}: {{ item }} ${fake("{{ item }}")}`,
        output_schema: SCHEMA,
      },
      { id: "report", type: "llm", prompt_template: `{{ each.success_count }} of {{ each.count }} done ${fake("report")}`, output_schema: SCHEMA },
    ],
  };
  const started = performance.now();
  const created = await call(base, "POST", "/v1/pipelines", { token: key, body });
  if (created.status !== 202) throw new Error(`POST /v1/pipelines: ${created.status} ${JSON.stringify(created.body)}`);
  const events = await readSse(await openEvents(base, key, created.body.job_id));
  const wallMs = performance.now() - started;
  const end = events.at(-1);
  if (end?.event !== "MAP_COMPLETED" || end.data.status !== "completed") throw new Error(`the pipeline did not complete: ${JSON.stringify(end)}`);
  if (end.data.output?.echo !== `${w.n} of ${w.n} done`) throw new Error(`unexpected output ${JSON.stringify(end.data.output)}`);
  const job = (await call(base, "GET", `/v1/jobs/${created.body.job_id}`, { token: key })).body;
  return { wallMs, calls: job.total_attempts as number };
}
