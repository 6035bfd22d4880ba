/**
 * Token log-probabilities as a cascade's score (src/llm/logprobs.ts): OpenAI's `logprobs.content`
 * read and bounded, the probability of a `keep` or `label` value found at its token, and a
 * model that refuses the parameter remembered.
 */
import { describe, expect, it } from "vitest";
import { MAX_LOGPROB_TOKENS, noteLogprobsRefusal, readLogprobs, refusesLogprobs, valueProbability, type TokenLogprob } from "../../../src/llm/logprobs";
import { ProviderFailure } from "../../../src/llm/errors";

const tok = (token: string, p = 0.999, top: [string, number][] = []): TokenLogprob => ({
  token,
  logprob: Math.log(p),
  top: top.map(([t, q]) => ({ token: t, logprob: Math.log(q) })),
});

describe("token log-probabilities", () => {
  it("reads OpenAI's content list, and refuses a malformed or oversized one", () => {
    const content = [
      {
        token: "{",
        logprob: -0.01,
        bytes: [123],
        top_logprobs: [
          { token: "{", logprob: -0.01, bytes: [123] },
          { token: 7, logprob: -1 },
        ],
      },
    ];
    expect(readLogprobs({ content, refusal: null })).toEqual([{ token: "{", logprob: -0.01, top: [{ token: "{", logprob: -0.01 }] }]);
    expect(readLogprobs(null)).toBeNull();
    expect(readLogprobs({ content: [] })).toBeNull();
    expect(readLogprobs({ content: [{ token: "x", logprob: 0.5 }] })).toBeNull(); // a log-probability is never positive
    expect(readLogprobs({ content: [{ token: "x", logprob: Number.NaN }] })).toBeNull();
    expect(readLogprobs({ content: Array.from({ length: MAX_LOGPROB_TOKENS + 1 }, () => ({ token: "x", logprob: -1 })) })).toBeNull();
  });

  it("scores a filter's keep by its token, against the other boolean among the alternatives", () => {
    const text = '{"keep":true,"reason":"x"}';
    const tokens = [
      tok("{"),
      tok('"'),
      tok("keep"),
      tok('"'),
      tok(":"),
      tok("true", 0.6, [
        ["true", 0.6],
        ["false", 0.2],
      ]),
      tok(","),
      tok('"'),
      tok("reason"),
      tok('"'),
      tok(":"),
      tok('"'),
      tok("x"),
      tok('"'),
      tok("}"),
    ];
    expect(valueProbability(text, tokens, "keep")).toBeCloseTo(0.75, 12); // 0.6 / (0.6 + 0.2)
    const alone = tokens.map((t) => (t.token === "true" ? tok("true", 0.6) : t));
    expect(valueProbability(text, alone, "keep")).toBeCloseTo(0.6, 12); // no alternative given: its own probability
    expect(valueProbability('{"keep": false}', [tok("{"), tok('"keep"'), tok(":"), tok(" false", 0.9, [[" true", 0.05]]), tok("}")], "keep")).toBeCloseTo(
      0.9 / 0.95,
      12,
    );
  });

  it("scores a label by its first token, and gives up when the tokens do not spell the text or the field is missing", () => {
    const text = '{"label":"complaint","confidence":1}';
    const tokens = [tok('{"'), tok("label"), tok('":"'), tok("compl", 0.8), tok("aint"), tok('","'), tok("confidence"), tok('":'), tok("1"), tok("}")];
    expect(valueProbability(text, tokens, "label")).toBeCloseTo(0.8, 12);
    expect(valueProbability(text.replace("complaint", "praise"), tokens, "label")).toBeNull();
    expect(valueProbability('{"other":1}', [tok('{"other":1}')], "keep")).toBeNull();
    expect(valueProbability('{"keep":"maybe"}', [tok('{"keep":'), tok('"maybe"'), tok("}")], "keep")).toBeNull();
  });

  it("remembers a model that answers 400 naming logprobs, and only that answer", () => {
    expect(noteLogprobsRefusal("m-429", new ProviderFailure("provider returned 429: slow down", "transient", 429))).toBe(false);
    expect(noteLogprobsRefusal("m-400", new ProviderFailure("provider returned 400: bad temperature", "permanent", 400))).toBe(false);
    expect(refusesLogprobs("m-refuses")).toBe(false);
    expect(
      noteLogprobsRefusal("m-refuses", new ProviderFailure("provider returned 400: This model does not support the 'logprobs' parameter.", "permanent", 400)),
    ).toBe(true);
    expect(refusesLogprobs("m-refuses")).toBe(true);
  });
});
