#!/usr/bin/env node
/**
 * The `fanout` command line (USAGE below). FANOUT_API_KEY and FANOUT_URL come from the
 * environment (or --api-key, --url). Exit codes: 0 all succeeded, 1 some items (or the job)
 * failed, 2 usage or API error.
 */
import { createWriteStream, readFileSync } from "node:fs";
import { extname } from "node:path";
import { parseArgs } from "node:util";
import { Fanout, FanoutError, type MapResult } from "./index.js";
import {
  executionFlag,
  int,
  jobFlags,
  mapReduceOptions,
  need,
  reduceOptions,
  runMapReduce,
  runRecover,
  runReduce,
  runResume,
  UsageError,
  type Flags,
} from "./cli-staged.js";
import { estimatePipeline, runPipeline } from "./cli-pipeline.js";
import { classifyOptions, filterOptions, rankOptions, resolveOptions, runClassify, runFilter, runRank, runResolve } from "./cli-semantic.js";
import { runEvaluate } from "./cli-evaluate.js";
import { parseCsv } from "./csv.js";
import { costText, Progress, trackBatches, trackConcurrency, trackPacing, type ProgressState } from "./progress.js";

const USAGE = `usage:
  fanout map --model M --template FILE [--schema FILE] --input FILE(.jsonl|.csv|.json) [--out FILE] [--concurrency N]
             [--max-retries N] [--timeout SECS] [--system TEXT] [--budget TOKENS] [--budget-usd DOLLARS [--on-exhausted pause|fail]]
             [--cache TTL_SECS] [--mode realtime|batch|auto [--deadline SECS]]   (batch: the provider's batch API, half the price)
  fanout reduce --model M --reduction-template FILE [--schema FILE] [--inner-template FILE [--inner-schema FILE]]
             --input FILE (a .json list or object of named inputs, .jsonl, .csv) [--initial JSON] [--out FILE]
             [--concurrency N] [--budget TOKENS] [--cache TTL_SECS]
  fanout map-reduce --model M --mapper-template FILE [--mapper-schema FILE] --reducer-template FILE [--schema FILE]
             [--synthesis-template FILE [--synthesis-schema FILE]] --input FILE(.jsonl|.csv|.json) [--docs-per-mapper N]
             [--concurrency N] [--strategy hierarchical|flat|category] [--fan-in N] [--shuffle-key PATH]
             [--dedupe-fields F1,F2] [--conflict first|most_frequent|highest_confidence] [--map-failures continue]
             [--budget TOKENS] [--cache TTL_SECS] [--out FILE]
  fanout filter [FILE] --predicate TEXT --model M [--input FILE(.jsonl|.csv|.json)] [--cascade-model M [--accept-above X]
             [--reject-below X]] [--concurrency N] [--budget TOKENS] [--cache TTL_SECS] [--out FILE]
             (prints {kept, dropped, failed}; fanout results JOB_ID --kept true lists the kept items)
  fanout classify [FILE] --categories a,b,c|FILE.json --model M [--input FILE] [--multi-label] [--template FILE]
             [--cascade-model M [--accept-above X]] [--concurrency N] [--budget TOKENS] [--cache TTL_SECS] [--out FILE]
             (prints {counts, failed})
  fanout rank [FILE] --criteria TEXT --k N --model M [--input FILE] [--template FILE] [--comparison-template FILE]
             [--concurrency N] [--budget TOKENS] [--out FILE]   (prints the top k: [{index, score, wins?}])
  fanout resolve [FILE] --comparison-template FILE --block-keys F1,F2 --model M [--input FILE]
             [--block-method exact|prefix|trigram] [--threshold X] [--resolution-template FILE] [--max-comparisons N]
             [--concurrency N] [--budget TOKENS] [--out FILE]   (prints {clusters, resolved, failed})
  fanout evaluate JOB_ID --judge M --criterion "name: what passing means" [--criterion …] [--sample N] [--seed S]
             [--gold FILE(.json|.jsonl of {index, expected})] [--compare JOB_ID_B] [--mode batch|auto] [--out FILE]
             (prints the pass rates, accuracy or win rate with their intervals; fanout results ID --failed true)
  fanout pipeline run FILE(.json|.xml) [--model M] [--inputs FILE.json] [--out FILE]
             (FILE: the POST /v1/pipelines body, or the XML task format; --model and --inputs fill what it leaves out)
  fanout estimate map|reduce|map-reduce|filter|classify|rank|resolve (the flags of that command, --input FILE): the dry-run estimate, nothing is created
  fanout estimate pipeline FILE [--model M] [--inputs FILE.json]
  fanout jobs [--status S] [--limit N]
  fanout status JOB_ID
  fanout results JOB_ID [--stage NAME] [--out FILE] [--order input|completion] [--kept true|false] [--failed true|false]
  fanout cancel JOB_ID
  fanout delete JOB_ID             (an ended job, with its results, sessions and events)
  fanout recover JOB_ID [--error-kinds K1,K2] [--model M] [--max-retries N] [--timeout SECS] [--budget TOKENS]
             (re-runs what failed and follows that round with a progress line, like map)
  fanout resume JOB_ID [--budget TOKENS]
map, filter, classify and map-reduce take --mode and --deadline; every job-creating command takes --budget-usd
every command: --api-key KEY (default: FANOUT_API_KEY; one of them is required)
               --url URL (default: FANOUT_URL, else http://localhost:8787)
               -h, --help`;

/** A fold's inputs: a .json object is named inputs; anything else is read as a list. */
export function readNamedInputs(path: string): unknown[] | Record<string, unknown> {
  if (extname(path).toLowerCase() !== ".json") return readInputs(path);
  const value: unknown = JSON.parse(readFileSync(path, "utf8"));
  if (typeof value !== "object" || value === null) throw new UsageError(`${path}: expected a JSON array or object`);
  return value as unknown[] | Record<string, unknown>;
}

/** Inputs from a file: .jsonl lines, .csv rows, or a .json array. */
export function readInputs(path: string): unknown[] {
  const text = readFileSync(path, "utf8");
  switch (extname(path).toLowerCase()) {
    case ".csv":
      return parseCsv(text);
    case ".json": {
      const value: unknown = JSON.parse(text);
      if (!Array.isArray(value)) throw new UsageError(`${path}: expected a JSON array`);
      return value;
    }
    case ".jsonl":
    case ".ndjson":
      return text
        .split("\n")
        .map((line) => line.trim())
        .filter(Boolean)
        .map((line, i) => {
          try {
            return JSON.parse(line) as unknown;
          } catch {
            throw new UsageError(`${path}:${i + 1}: not a JSON line`);
          }
        });
    default:
      throw new UsageError(`${path}: use .jsonl, .csv or .json`);
  }
}

async function writeLines(path: string | undefined, lines: unknown[]): Promise<void> {
  const text = lines.map((l) => JSON.stringify(l)).join("\n") + (lines.length ? "\n" : "");
  if (!path) process.stdout.write(text);
  else
    await new Promise<void>((resolve, reject) =>
      createWriteStream(path)
        .end(text, () => resolve())
        .on("error", reject),
    );
}

function mapOptions(values: Flags, inputs: unknown[]) {
  return {
    inputs,
    model: need(values.model, "--model"),
    promptTemplate: readFileSync(need(values.template, "--template"), "utf8"),
    outputSchema: typeof values.schema === "string" ? (JSON.parse(readFileSync(values.schema, "utf8")) as Record<string, unknown>) : undefined,
    ...jobFlags(values),
    ...executionFlag(values),
  };
}

async function runEstimate(client: Fanout, kind: string | undefined, values: Flags): Promise<number> {
  const input = need(values.input, "--input");
  const estimate =
    kind === "map"
      ? await client.dryRun("map", mapOptions(values, readInputs(input)))
      : kind === "reduce"
        ? await client.dryRun("reduce", reduceOptions(values, readNamedInputs(input)))
        : kind === "map-reduce"
          ? await client.dryRun("map-reduce", mapReduceOptions(values, readInputs(input)))
          : kind === "filter"
            ? await client.dryRun("filter", filterOptions(values, readInputs(input)))
            : kind === "classify"
              ? await client.dryRun("classify", classifyOptions(values, readInputs(input)))
              : kind === "rank"
                ? await client.dryRun("rank", rankOptions(values, readInputs(input)))
                : kind === "resolve"
                  ? await client.dryRun("resolve", resolveOptions(values, readInputs(input)))
                  : null;
  if (!estimate) throw new UsageError("fanout estimate map|reduce|map-reduce|filter|classify|rank|resolve …");
  process.stdout.write(`${JSON.stringify(estimate, null, 2)}\n`);
  return 0;
}

async function runMap(client: Fanout, values: Flags): Promise<number> {
  const inputs = readInputs(need(values.input, "--input"));
  const job = client.map(mapOptions(values, inputs));
  const out = typeof values.out === "string" ? createWriteStream(values.out) : process.stdout;
  const progress = new Progress();
  const state: ProgressState = { done: 0, failed: 0, total: inputs.length };
  trackConcurrency(job, state, progress);
  trackPacing(job, state, progress);
  trackBatches(job);
  let attempts = 0;
  let status = "completed";
  let cost: number | null | undefined;
  job.on({
    MAP_COMPLETED: (e) => {
      attempts = e.total_attempts;
      status = e.status;
      cost = e.cost_usd;
    },
  });
  await job.id(); // the job exists (a refused request ends here, with no progress line before its error)
  progress.update(state, true);
  for await (const result of job as AsyncIterable<MapResult>) {
    state.done++;
    if (!result.success) state.failed++;
    out.write(`${JSON.stringify(result)}\n`);
    progress.update(state);
  }
  progress.update(state, true);
  progress.finish();
  if (out !== process.stdout) await new Promise<void>((resolve) => (out as NodeJS.WritableStream).end(() => resolve()));
  process.stderr.write(
    `${state.failed ? "done with failures" : "done"}: ${state.done}/${state.total} items, ${state.done - state.failed} succeeded, ` +
      `${state.failed} failed, ${attempts} attempts${costText(cost)}, job ${await job.id()} ${status}\n`,
  );
  return state.failed > 0 || state.done < state.total ? 1 : 0;
}

export async function main(argv: string[]): Promise<number> {
  const { values: parsed, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      model: { type: "string" },
      template: { type: "string" },
      schema: { type: "string" },
      input: { type: "string" },
      out: { type: "string" },
      concurrency: { type: "string" },
      "max-retries": { type: "string" },
      timeout: { type: "string" },
      system: { type: "string" },
      budget: { type: "string" },
      "budget-usd": { type: "string" },
      mode: { type: "string" },
      deadline: { type: "string" },
      cache: { type: "string" },
      "on-exhausted": { type: "string" },
      "reduction-template": { type: "string" },
      "inner-template": { type: "string" },
      "inner-schema": { type: "string" },
      initial: { type: "string" },
      stage: { type: "string" },
      "error-kinds": { type: "string" },
      "mapper-template": { type: "string" },
      "mapper-schema": { type: "string" },
      "reducer-template": { type: "string" },
      "synthesis-template": { type: "string" },
      "synthesis-schema": { type: "string" },
      "docs-per-mapper": { type: "string" },
      strategy: { type: "string" },
      "fan-in": { type: "string" },
      "shuffle-key": { type: "string" },
      "dedupe-fields": { type: "string" },
      conflict: { type: "string" },
      "map-failures": { type: "string" },
      status: { type: "string" },
      limit: { type: "string" },
      order: { type: "string" },
      inputs: { type: "string" },
      predicate: { type: "string" },
      categories: { type: "string" },
      "multi-label": { type: "boolean" },
      "cascade-model": { type: "string" },
      "accept-above": { type: "string" },
      "reject-below": { type: "string" },
      kept: { type: "string" },
      criteria: { type: "string" },
      k: { type: "string" },
      "comparison-template": { type: "string" },
      "resolution-template": { type: "string" },
      "block-keys": { type: "string" },
      "block-method": { type: "string" },
      threshold: { type: "string" },
      "max-comparisons": { type: "string" },
      judge: { type: "string" },
      criterion: { type: "string", multiple: true },
      sample: { type: "string" },
      seed: { type: "string" },
      gold: { type: "string" },
      compare: { type: "string" },
      failed: { type: "string" },
      "api-key": { type: "string" },
      url: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  const { criterion, ...values } = parsed; // the one flag given many times: evaluate's
  const [command, id, file] = positionals;
  if (values.help || !command) {
    process.stdout.write(`${USAGE}\n`);
    return values.help ? 0 : 2;
  }
  const apiKey = values["api-key"] ?? process.env.FANOUT_API_KEY;
  if (!apiKey) throw new UsageError("set FANOUT_API_KEY (or pass --api-key)");
  const client = new Fanout({ apiKey, baseUrl: values.url ?? process.env.FANOUT_URL ?? "http://localhost:8787" });
  switch (command) {
    case "map":
      return runMap(client, values);
    case "reduce":
      return runReduce(client, values, readNamedInputs(need(values.input, "--input")));
    case "map-reduce":
      return runMapReduce(client, values, readInputs(need(values.input, "--input")));
    case "filter":
      return runFilter(client, values, readInputs(need(values.input ?? id, "FILE or --input")));
    case "classify":
      return runClassify(client, values, readInputs(need(values.input ?? id, "FILE or --input")));
    case "rank":
      return runRank(client, values, readInputs(need(values.input ?? id, "FILE or --input")));
    case "resolve":
      return runResolve(client, values, readInputs(need(values.input ?? id, "FILE or --input")));
    case "estimate":
      return id === "pipeline" ? estimatePipeline(client, file, values) : runEstimate(client, id, values);
    case "evaluate":
      return runEvaluate(client, id, values, criterion ?? []);
    case "pipeline":
      if (id !== "run") throw new UsageError("fanout pipeline run FILE");
      return runPipeline(client, file, values);
    case "recover":
      return runRecover(client, need(id, "JOB_ID"), values);
    case "resume":
      return runResume(client, need(id, "JOB_ID"), values);
    case "jobs": {
      const page = await client.jobs({ status: values.status as never, limit: int(values.limit, "--limit") });
      for (const j of page.jobs) process.stdout.write(`${j.id}\t${j.status}\t${j.completed}/${j.total}\t${j.failed} failed\t${j.model}\t${j.created_at}\n`);
      return 0;
    }
    case "status":
      process.stdout.write(`${JSON.stringify(await client.job(need(id, "JOB_ID")).status(), null, 2)}\n`);
      return 0;
    case "results": {
      const order = values.order === "completion" ? "completion" : "input";
      if (values.kept !== undefined && values.kept !== "true" && values.kept !== "false") throw new UsageError("--kept is true or false");
      if (values.failed !== undefined && values.failed !== "true" && values.failed !== "false") throw new UsageError("--failed is true or false");
      const flag = (v: string | undefined) => (v === undefined ? undefined : v === "true");
      await writeLines(
        values.out,
        await client.job(need(id, "JOB_ID")).results({ order, stage: values.stage, kept: flag(values.kept), failed: flag(values.failed) }),
      );
      return 0;
    }
    case "delete":
      await client.job(need(id, "JOB_ID")).delete();
      process.stdout.write(`${id} deleted\n`);
      return 0;
    case "cancel": {
      const job = await client.job(need(id, "JOB_ID")).cancel();
      process.stdout.write(`${job.id} ${job.status}\n`);
      return 0;
    }
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

function report(err: unknown): number {
  if (err instanceof UsageError) process.stderr.write(`error: ${err.message}\n${USAGE}\n`);
  else if (err instanceof FanoutError) {
    process.stderr.write(err.status === 0 ? `error: ${err.message}\n` : `error: ${err.code} (HTTP ${err.status}): ${err.message}\n`);
    if (Array.isArray(err.details)) for (const d of err.details as { path?: string; message?: string }[]) process.stderr.write(`  ${d.path}: ${d.message}\n`);
  } else process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => process.exit(report(err)),
);
