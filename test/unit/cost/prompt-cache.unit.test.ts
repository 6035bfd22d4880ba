import { describe, expect, it } from "vitest";
import { cacheBreak, minCacheableTokens, sharedPrefix, templatePrefix } from "../../../src/llm/prompt-cache";

const long = (tokens: number) => "x".repeat(tokens * 4);

describe("the shared prefix a stage's calls send first", () => {
  it("is the template's text before its first tag, expression or comment", () => {
    expect(templatePrefix("Rules: be brief.\nItem: {{ item }}")).toBe("Rules: be brief.\nItem: ");
    expect(templatePrefix("{% if item %}x{% endif %}")).toBe("");
    expect(templatePrefix("A {# note #} {{ item }}")).toBe("A ");
    expect(templatePrefix("no variables")).toBe("no variables");
  });

  it("is marked for Anthropic only when it reaches the model's minimum, ending in the prompt or on the system prompt", () => {
    expect(minCacheableTokens("anthropic/claude-sonnet-4-5")).toBe(1024);
    expect(minCacheableTokens("anthropic/claude-haiku-4-5")).toBe(4096);
    expect(minCacheableTokens("anthropic/claude-sonnet-4-6")).toBe(2048);
    const prefix = long(1100);
    expect(cacheBreak("anthropic/claude-sonnet-4-5", null, `${prefix}item 1`, prefix)).toEqual({ user: prefix.length });
    expect(cacheBreak("anthropic/claude-haiku-4-5", null, `${prefix}item 1`, prefix)).toBeNull(); // under Haiku 4.5's 4,096
    expect(cacheBreak("anthropic/claude-sonnet-4-5", long(1100), "item 1", "")).toEqual({ user: 0 }); // the system prompt alone
    expect(cacheBreak("anthropic/claude-sonnet-4-5", long(100), "item 1", "")).toBeNull();
    // A whitespace-trimming tag ate the prefix's trailing space: the rendered prompt's own prefix is marked.
    expect(cacheBreak("anthropic/claude-sonnet-4-5", null, `${prefix}item`, `${prefix} `)).toEqual({ user: prefix.length });
  });

  it("is what OpenAI caches by itself: 1,024 tokens and more, in steps of 128; Anthropic's marked one; no other provider's", () => {
    const prefix = long(1300);
    expect(sharedPrefix("openai/gpt-6-luna", null, `${prefix}item`, `${prefix}{{ item }}`)).toEqual({ tokens: 1280, writes: false });
    expect(sharedPrefix("openai/gpt-6-luna", null, `${long(1000)}item`, `${long(1000)}{{ item }}`)).toBeNull();
    expect(sharedPrefix("anthropic/claude-sonnet-4-5", null, `${prefix}item`, `${prefix}{{ item }}`)).toEqual({ tokens: 1300, writes: true });
    expect(sharedPrefix("openai-compatible/m", null, `${prefix}item`, `${prefix}{{ item }}`)).toBeNull();
  });
});
