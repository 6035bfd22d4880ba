/**
 * The fuzz harness of the template runtime's cost model (./template-fuzz*.unit.test.ts): a call
 * rendered on adversarial operands with adversarial arguments (0, ±1, 10⁸, NaN, 256 KB strings,
 * 10,000-element and 200-deep lists, unicode) must end within its time bound, with a value or a
 * clean error — never an engine failure (heap, stack, V8's string cap).
 */
import { expect } from "vitest";
import { compileTemplate } from "../../src/template/jinja";
import { cpuMs } from "./timed";

const RENDER_MS = 1_000; // the bound: a clean failure within 1 s of thread time (a bounded render measures ≤ 0.15 s)
const HEAP_BYTES = 256 * 2 ** 20; // far above any bounded render, far below what the 10⁸-element slice allocated

const deep = (levels: number): unknown => (levels === 0 ? [] : [deep(levels - 1)]);
export const OPERANDS: Record<string, unknown> = {
  zero: 0,
  minusOne: -1,
  huge: 10 ** 8,
  nan: Number.NaN,
  empty: "",
  text256k: "ab cd-ef\n".repeat(28_500),
  unicode: "☃ü\u0000\u{1F600}<&>'\"".repeat(2_000),
  list10k: Array.from({ length: 10_000 }, (_, i) => i),
  deep200: deep(200),
  dict2k: Object.fromEntries(Array.from({ length: 2_000 }, (_, i) => [`k${i}`, { v: i, s: "x" }])),
  none: null,
};
const ARGS: Record<string, unknown> = {
  zero: 0,
  one: 1,
  minusOne: -1,
  huge: 10 ** 8,
  nan: Number.NaN,
  text256k: "y".repeat(256_000),
  list10k: OPERANDS.list10k,
  name: "string",
};
const ARG_LISTS: string[][] = [[], ...Object.keys(ARGS).map((a) => [a]), ["huge", "text256k"], ["one", "huge"], ["huge", "huge"], ["name", "huge"]];
/** A large operand takes a render ~0.05–0.1 s (binding it, and real work on 256 KB): it meets the arguments that scale a result. */
const LARGE_OPERANDS = new Set(["text256k", "list10k", "deep200", "dict2k"]);
const LARGE_ARG_LISTS: string[][] = [[], ["huge"], ["minusOne"], ["huge", "huge"]];

interface Outcome {
  ms: number;
  heap: number;
  error: unknown;
}

function render(source: string, vars: Record<string, unknown>): Outcome {
  let template;
  try {
    template = compileTemplate(source, "t", []);
  } catch (error) {
    return { ms: 0, heap: 0, error };
  }
  const heapBefore = process.memoryUsage().heapUsed;
  const started = cpuMs();
  let error: unknown = null;
  try {
    template.renderVars(vars);
  } catch (err) {
    error = err;
  }
  return { ms: cpuMs() - started, heap: process.memoryUsage().heapUsed - heapBefore, error };
}

/** An engine failure, not a clean one: the heap or the stack ran out, or a string or array grew past V8's cap. */
const crashed = (error: unknown) => /call stack|Invalid (string|array|typed array) length|out of memory|allocation failed/i.test(String(error));

/** Argument lists for calls through `map`: the path is the direct call's, so a few suffice. */
export const MAP_ARG_LISTS = [[], ["huge"], ["text256k"]];

/** Renders `call(args)` on every operand with every argument list; returns the slowest render and the count. */
export function fuzz(call: (args: string[]) => string, argLists = ARG_LISTS): { worst: number; count: number } {
  let worst = 0;
  let count = 0;
  for (const [operandName, operand] of Object.entries(OPERANDS)) {
    for (const args of LARGE_OPERANDS.has(operandName) ? argLists.filter((a) => LARGE_ARG_LISTS.some((b) => b.join() === a.join())) : argLists) {
      const source = call(args);
      // Only the variables the call reads: binding a 10,000-element list costs the render ~50 ms.
      const outcome = render(source, { v: operand, ...Object.fromEntries(args.map((a) => [a, ARGS[a]])) });
      count++;
      const where = `${source} on ${operandName}`;
      expect(crashed(outcome.error), `${where}: ${String(outcome.error)}`).toBe(false);
      expect(outcome.ms, where).toBeLessThan(RENDER_MS);
      expect(outcome.heap, where).toBeLessThan(HEAP_BYTES);
      worst = Math.max(worst, outcome.ms);
    }
  }
  return { worst, count };
}

export const FUZZ_TIMEOUT_MS = 60_000; // ~150 renders a name, most well under a millisecond
export const argList = (args: string[]) => args.join(", ");
