/**
 * The work one request or one alarm may do on what a tenant sent: renders of its templates,
 * counted in the renderer's steps (src/template/render-budget.ts: ~1–1.5 µs of one core each) and in the
 * characters the renders produced. One render is bounded by the render limits; this bounds their
 * sum, so no request answers later than under a second of its own CPU, whatever the number of
 * items, and no alarm takes longer than that to submit a batch (the rest go in the next alarm).
 * Time cannot bound it: inside workerd the clock stands still while code runs.
 */
import type { RenderMeter } from "../template/jinja";

/** Steps of rendering one invocation may spend: ~0.5–0.75 s of one core (10,000 renders of 10,000 steps took 101 s before this bound). */
export const INVOCATION_RENDER_STEPS = 500_000;
/** Characters of rendered prompts one invocation may produce (and hold: a batch's file, an estimate's exact prompts). */
export const INVOCATION_RENDER_CHARS = 8_000_000;

export class WorkBudget implements RenderMeter {
  steps = 0;
  chars = 0;

  constructor(
    readonly maxSteps = INVOCATION_RENDER_STEPS,
    readonly maxChars = INVOCATION_RENDER_CHARS,
  ) {}

  /** A render produced `text`. */
  produced(text: string | null): void {
    this.chars += text?.length ?? 0;
  }

  /** Nothing more may be rendered in this invocation. */
  get spent(): boolean {
    return this.steps >= this.maxSteps || this.chars >= this.maxChars;
  }
}
