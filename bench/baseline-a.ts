/**
 * Baseline A: what a user writes by hand: p-limit around the openai SDK, Promise.all, outputs
 * validated like Fanout's. Its natural behaviour: the SDK's own retries (2, honouring
 * Retry-After), no retry of invalid output. Usage: node bench/baseline-a.ts '<workload JSON>' <baseURL>
 */
import OpenAI from "openai";
import pLimit from "p-limit";
import { items, MODEL, renderPrompt, validOutput, type RunFigures, type Workload } from "./workload.ts";

const w = JSON.parse(process.argv[2] as string) as Workload;
const client = new OpenAI({ apiKey: "sk-bench", baseURL: process.argv[3] });
const limit = pLimit(w.concurrency);
const started = performance.now();
let firstResultMs: number | null = null;

const outcomes = await Promise.all(
  items(w).map((item) =>
    limit(async () => {
      try {
        const completion = await client.chat.completions.create({ model: MODEL, messages: [{ role: "user", content: renderPrompt(item) }] });
        firstResultMs ??= performance.now() - started;
        return validOutput(completion.choices[0]?.message.content ?? "") !== null;
      } catch {
        return false;
      }
    }),
  ),
);
const figures: RunFigures = {
  wallMs: performance.now() - started,
  firstResultMs,
  recorded: outcomes.length,
  succeeded: outcomes.filter(Boolean).length,
};
console.log(JSON.stringify(figures));
