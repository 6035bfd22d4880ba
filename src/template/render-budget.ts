/**
 * Bounds on the work one render may do, so no template can exhaust a worker's heap or hold its
 * thread (a `range(10**7)` once took the whole runtime down). Every bound is a clean render error
 * (`TemplateLimitError`), which fails the item — never the process.
 *
 * - `maxRange`: the longest `range()` and the longest list any expression may produce;
 * - `maxSteps`: evaluated nodes per render, a loop iteration counting as five (bounds loop
 *   iterations and CPU time: ~0.1 s of one core here at worst);
 * - `maxDepth`: nested evaluations (bounds macro recursion well below the JS stack);
 * - `maxOutputChars`: the rendered prompt and any single string value;
 * - `maxTouchedChars`: characters and list elements produced over the whole render, so a loop
 *   that keeps producing large values is stopped long before memory runs out.
 * Deployments tune them with TEMPLATE_MAX_RANGE, TEMPLATE_MAX_STEPS, TEMPLATE_MAX_DEPTH and
 * TEMPLATE_MAX_OUTPUT_CHARS (see config.ts).
 */
import type { Cost } from "./costs";

export interface RenderLimits {
  maxRange: number;
  maxSteps: number;
  maxDepth: number;
  maxOutputChars: number;
}

export const DEFAULT_RENDER_LIMITS: RenderLimits = {
  maxRange: 100_000, // Jinja2's own sandbox caps range() at 100,000
  maxSteps: 100_000, // ~0.15 s of one core for the slowest node mix (a loop emitting its index)
  maxDepth: 300, // each level is a few JS frames; V8's stack overflows past ~10,000 frames
  maxOutputChars: 1_000_000, // ~250k tokens: more than any model's context takes in one prompt
};

const TOUCHED_FACTOR = 20;
// One loop iteration costs about as much as five evaluated nodes (two scopes and the `loop` map).
export const LOOP_ITERATION_STEPS = 5; // values produced over a render may add up to 20× the output cap

/** Element comparisons (~30–50 ns each) per step of the render budget (~1.5 µs: one evaluated node). */
export const COMPARISONS_PER_STEP = 16;

export class TemplateLimitError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TemplateLimitError";
  }
}

/** The running tally of one render against its limits. */
export class RenderBudget {
  #steps = 0;
  #depth = 0;
  #touched = 0;

  constructor(readonly limits: RenderLimits) {}

  /** The steps of work done so far (evaluated nodes, loop iterations, filters' comparisons). */
  get steps(): number {
    return this.#steps;
  }

  enter(): void {
    if (++this.#steps > this.limits.maxSteps) {
      throw new TemplateLimitError(`the template did more than ${this.limits.maxSteps} steps of work`);
    }
    if (++this.#depth > this.limits.maxDepth) {
      throw new TemplateLimitError(`the template nests (or recurses) deeper than ${this.limits.maxDepth} levels`);
    }
  }

  leave(): void {
    this.#depth--;
  }

  /** Charges a produced string of `length` characters. */
  chars(length: number): void {
    if (length > this.limits.maxOutputChars) {
      throw new TemplateLimitError(`the template produced a string of ${length} characters; at most ${this.limits.maxOutputChars}`);
    }
    this.#touch(length);
  }

  /** Charges a produced list of `length` elements. */
  list(length: number): void {
    if (length > this.limits.maxRange) {
      throw new TemplateLimitError(`the template produced a list of ${length} elements; at most ${this.limits.maxRange}`);
    }
    this.#touch(length);
  }

  /** Charges a loop of `iterations` before it starts: the interpreter sets up every iteration up front. */
  loop(iterations: number): void {
    this.#steps += iterations * LOOP_ITERATION_STEPS;
    if (this.#steps > this.limits.maxSteps) {
      throw new TemplateLimitError(`a loop of ${iterations} iterations is over the limit of ${this.limits.maxSteps} steps of work`);
    }
  }

  /** Charges `units` steps of work a filter does inside one node (comparisons, sorting, membership scans). */
  work(units: number, what: string): void {
    this.#steps += units;
    if (this.#steps > this.limits.maxSteps) {
      throw new TemplateLimitError(`${what} is over the limit of ${this.limits.maxSteps} steps of work`);
    }
  }

  /**
   * Charges a call's declared cost (./costs) before it runs: its longest string and list against
   * their caps, its allocation against what the render may still produce, its work as steps.
   */
  charge(what: string, cost: Cost): void {
    if (cost.chars !== undefined) this.expect(cost.chars, what);
    if (cost.list !== undefined && cost.list > this.limits.maxRange) {
      throw new TemplateLimitError(`${what} would produce a list of ${cost.list} elements; at most ${this.limits.maxRange}`);
    }
    const alloc = cost.alloc ?? (cost.chars ?? 0) + (cost.list ?? 0);
    const cap = this.limits.maxOutputChars * TOUCHED_FACTOR;
    if (this.#touched + alloc > cap)
      throw new TemplateLimitError(`${what} would allocate ${alloc} characters and elements; the render may produce ${cap} in all`);
    if (cost.work) this.work(Math.ceil(cost.work / COMPARISONS_PER_STEP), what);
  }

  /** Refuses an operation whose result would be over the string cap, before it allocates anything. */
  expect(length: number, what: string): void {
    if (length > this.limits.maxOutputChars) {
      throw new TemplateLimitError(`${what} would produce ${length} characters; at most ${this.limits.maxOutputChars}`);
    }
  }

  #touch(amount: number): void {
    this.#touched += amount;
    const cap = this.limits.maxOutputChars * TOUCHED_FACTOR;
    if (this.#touched > cap) throw new TemplateLimitError(`the template produced more than ${cap} characters of values in all`);
  }
}

/** Python's range() with its length checked before anything is built. */
export function boundedRange(limits: RenderLimits, start: number, stop?: number, step = 1): number[] {
  const [from, to] = stop === undefined ? [0, start] : [start, stop];
  if (![from, to, step].every(Number.isInteger)) throw new Error(`range() takes integers, got ${JSON.stringify([start, stop, step])}`);
  if (step === 0) throw new Error("range() arg 3 must not be zero");
  const length = Math.max(0, Math.ceil((to - from) / step));
  if (length > limits.maxRange) {
    throw new TemplateLimitError(`range() of ${length} items is over the limit of ${limits.maxRange}`);
  }
  const out: number[] = [];
  for (let i = from; step > 0 ? i < to : i > to; i += step) out.push(i);
  return out;
}
