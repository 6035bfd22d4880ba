/**
 * Token estimates: one function serves the dry run, the 422 budget check and the reservation a
 * call makes before it starts. Without a tokenizer for every provider, a prompt counts
 * ceil(characters / 4) tokens (OpenAI's rule of thumb for English); the output counts its bound,
 * `max_tokens`, or DEFAULT_MAX_TOKENS when the request sets none (with a budget every call is
 * sent with that bound, so a reservation covers the output).
 */
import { compileTemplate, type CompiledTemplate, type RenderMeter } from "../template/jinja";
import type { RenderLimits } from "../template/render-budget";
import type { StageWork } from "./types";
import { executorOf } from "./executors";

export const DEFAULT_MAX_TOKENS = 1_024; // the contract's bound for calls without max_tokens
export const ESTIMATE_METHOD = "chars/4";
export const CHARS_PER_TOKEN = 4;

export function promptTokens(prompt: string, system: string | null): number {
  return Math.ceil((prompt.length + (system?.length ?? 0)) / CHARS_PER_TOKEN);
}

export function outputBound(maxTokens: number | null): number {
  return maxTokens ?? DEFAULT_MAX_TOKENS;
}

/** Each stage's prompt template, compiled once, for estimates and reservations. */
export class StageTemplates {
  readonly #templates = new Map<string, CompiledTemplate>();
  readonly #limits: RenderLimits;

  constructor(limits: RenderLimits) {
    this.#limits = limits;
  }

  get(stage: string, work: StageWork): CompiledTemplate {
    let template = this.#templates.get(stage);
    if (!template) {
      template = compileTemplate(executorOf(work).call(work).promptTemplate, "prompt_template", [], this.#limits);
      this.#templates.set(stage, template);
    }
    return template;
  }

  /** A recover may change the spec: compile again. */
  clear(): void {
    this.#templates.clear();
  }
}

/** One call's rendered prompt; null when it cannot render (that task fails without a call). `meter` gains the render's steps. */
export function renderedPrompt(template: CompiledTemplate, vars: Record<string, unknown>, meter?: RenderMeter): string | null {
  try {
    return template.renderVars(vars, meter);
  } catch {
    return null;
  }
}

/** The tokens of one call's rendered prompt; 0 when it cannot render. */
export function promptEstimate(template: CompiledTemplate, vars: Record<string, unknown>, system: string | null): number {
  const prompt = renderedPrompt(template, vars);
  return prompt === null ? 0 : promptTokens(prompt, system);
}
