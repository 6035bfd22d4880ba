/**
 * Token log-probabilities as a cascade's score (contract v4, "Cascades with a guarantee": `score`).
 * OpenAI's Chat Completions return them when asked (`logprobs`, `top_logprobs`): each token of
 * the answer with its log-probability and its likeliest alternatives. A filter's answer is scored
 * by the token that spells its `keep` value (P(true) against P(false) among the alternatives), a
 * classification's by the first token of its `label`. Models that refuse the parameter (OpenAI's
 * reasoning models answer 400 with `param: "logprobs"`) are remembered per isolate and asked
 * again without it: their answers keep the confidence they report.
 */
import { statusOf, describeFailure } from "./errors";

export interface TokenLogprob {
  token: string;
  logprob: number;
  top: { token: string; logprob: number }[];
}

/** At most this many tokens are read from an answer: a cascade's answer is a few dozen. */
export const MAX_LOGPROB_TOKENS = 2_048;
const TOP_KEPT = 20;
/** Models remembered as refusing logprobs, per isolate (bounded: the oldest forgotten). */
const MAX_REFUSING = 1_000;

const finite = (n: unknown): n is number => typeof n === "number" && Number.isFinite(n) && n <= 0;

/** OpenAI's `choices[0].logprobs.content`, checked and bounded; null when absent or malformed. */
export function readLogprobs(logprobs: unknown): TokenLogprob[] | null {
  const content = (logprobs as { content?: unknown } | null | undefined)?.content;
  if (!Array.isArray(content) || content.length === 0 || content.length > MAX_LOGPROB_TOKENS) return null;
  const out: TokenLogprob[] = [];
  for (const raw of content) {
    const t = raw as { token?: unknown; logprob?: unknown; top_logprobs?: unknown };
    if (typeof t?.token !== "string" || !finite(t.logprob)) return null;
    const top = Array.isArray(t.top_logprobs) ? t.top_logprobs.slice(0, TOP_KEPT) : [];
    out.push({
      token: t.token,
      logprob: t.logprob,
      top: top.flatMap((a) => {
        const alt = a as { token?: unknown; logprob?: unknown };
        return typeof alt?.token === "string" && finite(alt.logprob) ? [{ token: alt.token, logprob: alt.logprob }] : [];
      }),
    });
  }
  return out;
}

const VALUE_START: Record<ScoredField, RegExp> = { keep: /"keep"\s*:\s*/, match: /"match"\s*:\s*/, label: /"label"\s*:\s*"/ };

/** The answer's field a cascade scores: a yes-or-no (`keep`: a filter's; `match`: a join's pair) or a `label`. */
export type ScoredField = "keep" | "match" | "label";

/**
 * The probability the answer's tokens give its chosen `field` value: for `keep` (or `match`), the chosen
 * boolean's against the other's (from the alternatives at that token; the chosen token's own
 * probability when the other is not among them); for `label`, its first token's. Null when the
 * tokens do not spell the text, or the field is not there.
 */
export function valueProbability(text: string, tokens: TokenLogprob[], field: ScoredField): number | null {
  if (tokens.map((t) => t.token).join("") !== text) return null;
  const match = VALUE_START[field].exec(text);
  if (!match) return null;
  const start = match.index + match[0].length;
  let offset = 0;
  for (const t of tokens) {
    if (offset + t.token.length > start) return field === "label" ? Math.exp(t.logprob) : booleanProbability(t);
    offset += t.token.length;
  }
  return null;
}

function booleanProbability(t: TokenLogprob): number | null {
  const word = (token: string) => token.trim().replace(/^[^a-z]+/, "");
  const chosen = word(t.token);
  if (!chosen.startsWith("true") && !chosen.startsWith("false")) return null;
  const mass = (prefix: string) => t.top.filter((a) => word(a.token).startsWith(prefix)).reduce((sum, a) => sum + Math.exp(a.logprob), 0);
  const own = Math.exp(t.logprob);
  const other = mass(chosen.startsWith("true") ? "false" : "true");
  return other > 0 ? own / (own + other) : own;
}

const refusing = new Set<string>();

/** Whether a model is known to refuse logprobs (asked again without them). */
export function refusesLogprobs(model: string): boolean {
  return refusing.has(model);
}

/** A 400 that names the logprobs parameter: the model is remembered as refusing it; true when so. */
export function noteLogprobsRefusal(model: string, err: unknown): boolean {
  if (statusOf(err) !== 400 || !/logprobs/i.test(describeFailure(err))) return false;
  if (refusing.size >= MAX_REFUSING) refusing.delete(refusing.values().next().value as string);
  refusing.add(model);
  return true;
}
