/**
 * The fake's `POST /v1/embeddings`, as OpenAI answers it: `{"object": "list", "data": [{"object":
 * "embedding", "index": 0, "embedding": [...]}], "model", "usage": {"prompt_tokens",
 * "total_tokens"}}`, the vector `dimensions` long (the request's, else 1,536; 3,072 for a `large`
 * model) and of length 1. Tests script similarity: a text whose directive says `emb=NAME` gets
 * NAME's vector with a little of its own text's (cosine ≈ 0.99 between two texts of one NAME, ≈ 0
 * between NAMEs); any other text a vector of its own.
 */
import { estimateTokens } from "./wire.ts";

type Json = Record<string, unknown>;

/** A unit vector drawn from a seed string (xorshift over its FNV hash: the same string, the same vector). */
function seededVector(seed: string, dims: number): number[] {
  let h = 0x811c9dc5;
  for (let i = 0; i < seed.length; i++) h = Math.imul(h ^ seed.charCodeAt(i), 0x01000193) >>> 0;
  let x = h || 1;
  const v = Array.from({ length: dims }, () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 0xffffffff - 0.5;
  });
  const norm = Math.hypot(...v) || 1;
  return v.map((n) => n / norm);
}

export function embeddingBody(body: Json, text: string): Json {
  const model = String(body.model);
  const dims = typeof body.dimensions === "number" ? body.dimensions : model.includes("large") ? 3072 : 1536;
  const name = /<<fake[^>]*\bemb=([^\s>]+)/.exec(text)?.[1];
  const own = seededVector(text, dims);
  const base = name ? seededVector(`emb:${name}`, dims) : own;
  const mixed = base.map((b, i) => (name ? b + 0.1 * (own[i] as number) : b));
  const norm = Math.hypot(...mixed) || 1;
  const tokens = estimateTokens(text);
  return {
    object: "list",
    data: [{ object: "embedding", index: 0, embedding: mixed.map((n) => n / norm) }],
    model,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}
