/**
 * An estimate's prompts within one request's work budget (./work-budget.ts). The tasks are
 * rendered in an order spread over each stage and taken in turn from every stage, until the
 * budget is spent; each stage's other prompts are scaled from their variables' sizes by a
 * straight line fitted to the stage's rendered ones (tokens = a + b × characters of input). A
 * stage none of whose tasks was rendered counts its template's text and its input at
 * ceil(characters / 4). What was sampled, and how far the rendered prompts stood from the fit,
 * is said in the estimate's `method`.
 */
import { CHARS_PER_TOKEN, promptTokens } from "./estimate";

/** The order to render `n` tasks of one stage in: a stride near n × 0.618 coprime with n, so any first k are spread over the stage. */
export function spreadOrder(n: number): number[] {
  if (n <= 2) return Array.from({ length: n }, (_, i) => i);
  let stride = Math.max(1, Math.round(n * 0.618));
  while (gcd(stride, n) !== 1) stride++;
  return Array.from({ length: n }, (_, k) => (k * stride) % n);
}

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}

/** The positions of `stages` (each task's stage, in plan order) in the order to render them: each stage spread, the stages in turn. */
export function renderOrder(stages: readonly string[]): number[] {
  const byStage = new Map<string, number[]>();
  stages.forEach((stage, i) => {
    const list = byStage.get(stage) ?? [];
    list.push(i);
    byStage.set(stage, list);
  });
  const queues = [...byStage.values()].map((list) => spreadOrder(list.length).map((k) => list[k] as number));
  const order: number[] = [];
  for (let round = 0; order.length < stages.length; round++) for (const queue of queues) if (round < queue.length) order.push(queue[round] as number);
  return order;
}

/** One stage's line through its rendered prompts: tokens ≈ a + b × the input's characters. */
export interface PromptFit {
  a: number;
  b: number;
  /** How far the rendered prompts stood from the line: the largest |error| / tokens (0 with one point). */
  spread: number;
  points: number;
}

/** The least-squares line through (input size, prompt tokens); a slope below zero or an input of one size: the slope of chars/4 through their mean. */
export function fitPrompts(points: { size: number; tokens: number }[]): PromptFit | null {
  if (points.length === 0) return null;
  const n = points.length;
  const mx = points.reduce((s, p) => s + p.size, 0) / n;
  const my = points.reduce((s, p) => s + p.tokens, 0) / n;
  const sxx = points.reduce((s, p) => s + (p.size - mx) ** 2, 0);
  const sxy = points.reduce((s, p) => s + (p.size - mx) * (p.tokens - my), 0);
  let b = sxx > 0 ? sxy / sxx : 1 / CHARS_PER_TOKEN;
  if (!(b >= 0)) b = 1 / CHARS_PER_TOKEN;
  const a = my - b * mx;
  const spread = points.reduce((worst, p) => Math.max(worst, Math.abs(p.tokens - (a + b * p.size)) / Math.max(1, p.tokens)), 0);
  return { a, b, spread, points: n };
}

/** A prompt's tokens by its stage's line (never below zero), or, with no line, its template's text and input at chars/4. */
export function scaledTokens(fit: PromptFit | null, size: number, template: string, system: string | null): number {
  if (!fit) return promptTokens(template, system) + Math.ceil(size / CHARS_PER_TOKEN);
  return Math.max(0, Math.round(fit.a + fit.b * size));
}

/** What the estimate's `method` says of a sample: how many were rendered, and how far they stood from the fit. */
export function sampleNote(rendered: number, total: number, fits: Iterable<PromptFit | null>): string {
  const lines = [...fits];
  const spread = Math.max(0, ...lines.map((f) => f?.spread ?? 0));
  const blind = lines.filter((f) => f === null).length;
  const parts = [
    `${rendered} of ${total} prompts rendered within one request's CPU bound; the others scaled from their inputs' sizes by a line fitted to each stage's rendered prompts (those stood within ±${Math.round(spread * 100)}% of it)`,
  ];
  if (blind > 0) parts.push(`${blind} stage${blind === 1 ? "" : "s"} with no prompt rendered counted at the template's and the input's characters / 4`);
  return parts.join("; ");
}

/**
 * The characters a value takes as JSON, roughly (strings their length, numbers their digits,
 * structure one per key and element), each object measured once however often it is shared
 * (`seen`): linear in the distinct data, so measuring every task's variables costs no more than
 * reading the request did.
 */
export function sizeOf(value: unknown, seen: WeakMap<object, number> = new WeakMap()): number {
  if (typeof value === "string") return value.length + 2;
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") return String(value).length;
  if (value === null || typeof value !== "object") return 4;
  const known = seen.get(value);
  if (known !== undefined) return known;
  seen.set(value, 0); // a cycle (none in JSON) counts nothing
  let size = 2;
  if (Array.isArray(value)) for (const element of value) size += 1 + sizeOf(element, seen);
  else for (const [key, element] of Object.entries(value)) size += key.length + 4 + sizeOf(element, seen);
  seen.set(value, size);
  return size;
}
