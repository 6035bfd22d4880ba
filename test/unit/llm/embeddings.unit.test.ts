/**
 * Embedding answers (src/llm/embeddings.ts): OpenAI's answer read into a vector as text (7
 * significant digits a number), refused when it is not one, and the request's body with its
 * dimensions.
 */
import { describe, expect, it } from "vitest";
import { embeddingParams, embedWorkersAi, MAX_DIMENSIONS, readEmbedding, vectorText } from "../../../src/llm/embeddings";
import { ProviderFailure } from "../../../src/llm/errors";
import type { ModelRequest } from "../../../src/llm/types";

const request = (dimensions: number | null): ModelRequest => ({
  model: { provider: "openai", name: "text-embedding-3-small" },
  system: null,
  messages: [{ role: "user", content: "a red bicycle" }],
  temperature: null,
  maxTokens: null,
  timeoutMs: 1000,
  embedding: { dimensions },
});

describe("embedding answers", () => {
  it("reads OpenAI's answer: the vector as JSON text, its prompt tokens, no output", () => {
    const answer = readEmbedding({ object: "list", data: [{ embedding: [0.123456789, -2.5e-9, 1] }], usage: { prompt_tokens: 7 } });
    expect(JSON.parse(answer.text)).toEqual([0.1234568, -2.5e-9, 1]);
    expect(answer.usage).toEqual({ input_tokens: 7, output_tokens: 0 });
  });

  it("refuses an answer that is not a vector of finite numbers, or one too long", () => {
    for (const data of [
      [],
      [{}],
      [{ embedding: [] }],
      [{ embedding: ["1"] }],
      [{ embedding: [1, null] }],
      [{ embedding: Array(MAX_DIMENSIONS + 1).fill(0) }],
    ]) {
      expect(() => readEmbedding({ data }), JSON.stringify(data).slice(0, 40)).toThrow(ProviderFailure);
    }
    expect(() => readEmbedding(null)).toThrow(/not an embedding/);
  });

  it("asks for the dimensions only when set, and for floats", () => {
    expect(embeddingParams(request(256))).toEqual({ model: "text-embedding-3-small", input: "a red bicycle", encoding_format: "float", dimensions: 256 });
    expect(embeddingParams(request(null))).not.toHaveProperty("dimensions");
    expect(vectorText([1 / 3])).toBe("[0.3333333]");
  });

  it("embeds through the Workers AI binding: the model run with the text, the first vector read, prompt tokens at 4 characters", async () => {
    const asked: unknown[] = [];
    const ai = {
      run: async (model: string, input: unknown) => {
        asked.push([model, input]);
        return { shape: [1, 3], data: [[0.5, -0.25, 1]] };
      },
    };
    const bge = { ...request(null), model: { provider: "workers-ai" as const, name: "@cf/baai/bge-small-en-v1.5" } };
    const answer = await embedWorkersAi(bge, ai as never);
    expect(asked).toEqual([["@cf/baai/bge-small-en-v1.5", { text: ["a red bicycle"] }]]);
    expect(JSON.parse(answer.text)).toEqual([0.5, -0.25, 1]);
    expect(answer.usage).toEqual({ input_tokens: 4, output_tokens: 0 });
    await expect(embedWorkersAi(bge, undefined)).rejects.toThrow(/not bound/);
    await expect(embedWorkersAi(bge, { run: async () => ({ data: [["x"]] }) } as never)).rejects.toThrow(ProviderFailure);
  });
});
