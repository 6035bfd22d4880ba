/**
 * Token log-probabilities as OpenAI's Chat Completions return them (`logprobs: true`,
 * `top_logprobs: n`): `choices[0].logprobs = {content: [{token, logprob, bytes, top_logprobs}],
 * refusal: null}`. The answer's text is cut into word and punctuation tokens; each is near certain
 * (log 0.999) except the token that spells a `keep` or `label` value, whose probability a scripted
 * answer gives as `_p` (taken out of the answer) — else the `confidence` it states — with its
 * alternative (the other boolean, or `other`) at 1 − p. A model whose name holds `no-logprobs` refuses the parameter as OpenAI's
 * reasoning models do: 400, `param: "logprobs"`.
 */
type Json = Record<string, unknown>;

const TOKEN = /\s*[A-Za-z0-9_]+|\s*[^A-Za-z0-9_\s]|\s+$/g;
const SURE = Math.log(0.999);
const bytes = (token: string) => [...new TextEncoder().encode(token)];

/** OpenAI's answer to a request for logprobs from a model that has none. */
export function logprobsRefusal(body: Json): Json | null {
  if (body.logprobs !== true || !String(body.model).includes("no-logprobs")) return null;
  return { error: { message: "This model does not support the 'logprobs' parameter.", type: "invalid_request_error", param: "logprobs", code: null } };
}

/** The answer's value without its scripted `_p`, and the probability its value token gets: `_p`, else the confidence it states (null: neither). */
export function takeProbability(value: unknown): { value: unknown; p: number | null } {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { value, p: null };
  const { _p, ...rest } = value as Json;
  const stated = typeof rest.confidence === "number" && rest.confidence >= 0 && rest.confidence <= 1 ? rest.confidence : null;
  return { value: "_p" in value ? rest : value, p: typeof _p === "number" ? _p : stated };
}

/** `choices[0].logprobs` for an answer's text, or null when they were not asked for. */
export function logprobsOf(body: Json, text: string, p: number | null): Json | null {
  if (body.logprobs !== true) return null;
  const top = Math.max(0, Math.min(20, Number(body.top_logprobs ?? 0)));
  const tokens = text.match(TOKEN) ?? [];
  const valueAt = valueToken(text, tokens);
  const content = tokens.map((token, i) => {
    const scored = i === valueAt && p !== null;
    const logprob = scored ? Math.log(Math.max(p, 1e-9)) : SURE;
    const alternative = scored ? { token: other(token), logprob: Math.log(Math.max(1 - p, 1e-9)) } : { token: " the", logprob: Math.log(0.001) };
    const alts = [
      { token, logprob, bytes: bytes(token) },
      { ...alternative, bytes: bytes(alternative.token) },
    ].sort((a, b) => b.logprob - a.logprob);
    return { token, logprob, bytes: bytes(token), top_logprobs: alts.slice(0, top) };
  });
  return { content, refusal: null };
}

/** The index of the token that spells the `keep` or `label` value (-1: none). */
function valueToken(text: string, tokens: string[]): number {
  const match = /"(keep|label)"\s*:\s*"?/.exec(text);
  if (!match) return -1;
  const start = match.index + match[0].length;
  let offset = 0;
  for (const [i, token] of tokens.entries()) {
    if (offset + token.length > start) return i;
    offset += token.length;
  }
  return -1;
}

function other(token: string): string {
  const lead = token.slice(0, token.length - token.trimStart().length);
  const word = token.trim();
  return lead + (word === "true" ? "false" : word === "false" ? "true" : "other");
}
