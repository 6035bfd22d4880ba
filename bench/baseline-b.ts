/**
 * Baseline B: LangChain JS, `ChatOpenAI.batch` with `maxConcurrency`, outputs validated like
 * Fanout's. Its natural behaviour: LangChain's own retries, no retry of invalid output, and all
 * results at once at the end. Usage: node bench/baseline-b.ts '<workload JSON>' <baseURL>
 */
import { ChatOpenAI } from "@langchain/openai";
import { items, MODEL, renderPrompt, validOutput, type RunFigures, type Workload } from "./workload.ts";

const w = JSON.parse(process.argv[2] as string) as Workload;
const model = new ChatOpenAI({ model: MODEL, apiKey: "sk-bench", configuration: { baseURL: process.argv[3] } });
const started = performance.now();
const answers = await model.batch(
  items(w).map((item) => renderPrompt(item)),
  { maxConcurrency: w.concurrency },
  { returnExceptions: true },
);
const wallMs = performance.now() - started;
const succeeded = answers.filter((a) => !(a instanceof Error) && typeof a.content === "string" && validOutput(a.content) !== null).length;
const figures: RunFigures = { wallMs, firstResultMs: wallMs, recorded: answers.length, succeeded };
console.log(JSON.stringify(figures));
