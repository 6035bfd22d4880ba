/**
 * `fanout pipeline run FILE` and `fanout estimate pipeline FILE`: a pipeline document as the API
 * takes it — a `.json` body or a `.xml` task — with `--model` and `--inputs FILE.json` as the
 * pipeline's fields where the document does not give them. Progress per step on stderr; the
 * last step's output on stdout (or --out).
 */
import { readFileSync } from "node:fs";
import { extname } from "node:path";
import type { Fanout } from "./index.js";
import { followStaged, need, UsageError, type Flags } from "./cli-staged.js";

function document(path: string): Record<string, unknown> | string {
  const text = readFileSync(path, "utf8");
  const ext = extname(path).toLowerCase();
  if (ext === ".xml") return text;
  if (ext !== ".json") throw new UsageError(`${path}: a pipeline is a .json body or a .xml task`);
  const value: unknown = JSON.parse(text);
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new UsageError(`${path}: expected a JSON object (the POST /v1/pipelines body)`);
  return value as Record<string, unknown>;
}

function params(values: Flags): { model?: string; inputs?: Record<string, unknown> } {
  const inputs = typeof values.inputs === "string" ? (JSON.parse(readFileSync(values.inputs, "utf8")) as unknown) : undefined;
  if (inputs !== undefined && (typeof inputs !== "object" || inputs === null || Array.isArray(inputs)))
    throw new UsageError("--inputs: expected a JSON object of named inputs");
  return { model: typeof values.model === "string" ? values.model : undefined, inputs: inputs as Record<string, unknown> | undefined };
}

export function runPipeline(client: Fanout, file: string | undefined, values: Flags): Promise<number> {
  const job = client.pipelineDocument(document(need(file, "FILE")), params(values));
  const started = new Set<string>();
  job.on({
    STAGE_STARTED: (e) => {
      if (e.stage === "steps" || started.has(e.stage)) return;
      started.add(e.stage);
      process.stderr.write(`step ${e.stage}: started, ${e.total} task${e.total === 1 ? "" : "s"}\n`);
    },
    TASK_COMPLETED: (e) => {
      if (e.stage === "steps") process.stderr.write(`step ${String((e.result as { step?: unknown }).step)}: done\n`);
    },
  });
  return followStaged(job, values);
}

export async function estimatePipeline(client: Fanout, file: string | undefined, values: Flags): Promise<number> {
  const estimate = await client.estimateDocument(document(need(file, "FILE")), params(values));
  process.stdout.write(`${JSON.stringify(estimate, null, 2)}\n`);
  return 0;
}
