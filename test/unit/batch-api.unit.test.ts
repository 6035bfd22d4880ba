/**
 * The batch adapters (src/llm/batch) through the real SDKs against the fake model's batch APIs:
 * lines built from the requests a realtime call sends, the batch polled to its end, every line's
 * result matched back by custom_id (an answer, a failed request, an expired line), cancel, and a
 * lost OpenAI batch found again by its metadata.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeModelServer, type FakeModelServer } from "../fake-model/server.ts";
import { openAiBatch } from "../../src/llm/batch/openai-batch";
import { anthropicBatch } from "../../src/llm/batch/anthropic-batch";
import type { BatchApi } from "../../src/llm/batch/types";
import type { ModelRequest } from "../../src/llm/types";

let fake: FakeModelServer;
beforeAll(async () => {
  fake = await startFakeModelServer({ batchDelayMs: 50 });
});
afterAll(() => fake.close());

const request = (model: ModelRequest["model"], prompt: string): ModelRequest => ({
  model,
  system: "Be brief.",
  messages: [{ role: "user", content: prompt }],
  temperature: null,
  maxTokens: 50,
  timeoutMs: 10_000,
  outputSchema: { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] },
});

async function ended(api: BatchApi, endpoint: { apiKey: string; baseUrl: string }, id: string) {
  for (let i = 0; i < 100; i++) {
    const state = await api.retrieve(endpoint, id);
    if (state.phase !== "running") return state;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error("the batch never ended");
}

const cases: [string, BatchApi, ModelRequest["model"], () => { apiKey: string; baseUrl: string }][] = [
  ["OpenAI", openAiBatch, { provider: "openai", name: "gpt-6-luna" }, () => ({ apiKey: "sk-batch", baseUrl: `${fake.url}/v1` })],
  ["Anthropic", anthropicBatch, { provider: "anthropic", name: "claude-haiku-4-5" }, () => ({ apiKey: "sk-ant-batch", baseUrl: fake.url })],
];

describe.each(cases)("%s batches", (name, api, model, endpointOf) => {
  it("runs the lines and reads every result back by custom_id: an answer, a failed request, an expired line", async () => {
    const endpoint = endpointOf();
    const tag = `batchapi-${name}`;
    const lines = [
      api.line("s0-0", request(model, `a <<fake tag=${tag} id=0 steps=ok>>`)),
      api.line("s0-1", request(model, `b <<fake tag=${tag} id=1 steps=400>>`)),
      api.line("s0-2", request(model, `c <<fake tag=${tag} id=2 steps=expire>>`)),
    ];
    const id = await api.submit(endpoint, lines, `local-${name}`);
    expect((await api.retrieve(endpoint, id)).phase).toBe("running");
    const state = await ended(api, endpoint, id);
    expect(state).toMatchObject({ phase: "ended", completed: 1, failed: name === "OpenAI" ? 2 : 2 });
    const read = await api.results(endpoint, id, true, { wanted: new Set(["s0-0", "s0-1", "s0-2"]) });
    expect(read.cut).toBe(false);
    const results = new Map(read.lines.map((r) => [r.customId, r]));
    const answer = results.get("s0-0");
    expect(answer).toMatchObject({ kind: "answer", response: { finishReason: "stop" } });
    expect(JSON.parse(answer?.kind === "answer" ? answer.response.text : "{}")).toHaveProperty("answer");
    expect(answer?.kind === "answer" && answer.response.usage.input_tokens).toBeGreaterThan(0);
    expect(results.get("s0-1")).toMatchObject({ kind: "error", permanent: true });
    expect(results.get("s0-2")).toEqual({ customId: "s0-2", kind: "expired" });
    // Only the lines asked for are kept (a provider's file may hold others: they are read past, not kept).
    expect((await api.results(endpoint, id, true, { wanted: new Set(["s0-1"]) })).lines.map((r) => r.customId)).toEqual(["s0-1"]);
    // The id is the submitted batch's: its metadata (OpenAI) or its count of lines (Anthropic) say so.
    expect(await api.verify(endpoint, id, `local-${name}`, 3)).toBe(true);
    expect(await api.verify(endpoint, id, name === "OpenAI" ? "someone-else" : `local-${name}`, name === "OpenAI" ? 3 : 4)).toBe(false);
  });

  it("cancels a batch: its unfinished lines come back cancelled (or not at all)", async () => {
    const endpoint = endpointOf();
    // A line that would take ten minutes: never done by the cancel, however late it comes.
    const id = await api.submit(endpoint, [api.line("s1-0", request(model, `x <<fake tag=batchapi-cancel-${name} id=0 batch_ms=600000>>`))], `cancel-${name}`);
    await api.cancel(endpoint, id);
    const state = await ended(api, endpoint, id);
    expect(state.phase).toBe("ended");
    const results = (await api.results(endpoint, id, true, { wanted: new Set(["s1-0"]) })).lines;
    expect(results.every((r) => r.kind === "cancelled")).toBe(true);
  });
});

describe("finding a lost batch", () => {
  it("finds an OpenAI batch by the coordinator's id in its metadata; Anthropic has none to find by", async () => {
    const endpoint = { apiKey: "sk-find", baseUrl: `${fake.url}/v1` };
    const id = await openAiBatch.submit(endpoint, [openAiBatch.line("s0-0", request({ provider: "openai", name: "gpt-6-luna" }, "x"))], "lost-7");
    const since = Date.now() - 1_000;
    expect(await openAiBatch.find(endpoint, "lost-7", since)).toBe(id);
    expect(await openAiBatch.find(endpoint, "never", since)).toBeNull();
    expect(await anthropicBatch.find({ apiKey: "k", baseUrl: fake.url }, "lost-7", since)).toBeNull();
  });

  it("pages back through the key's batches, not only its last 100", async () => {
    const endpoint = { apiKey: "sk-find-many", baseUrl: `${fake.url}/v1` };
    const line = openAiBatch.line("s0-0", request({ provider: "openai", name: "gpt-6-luna" }, "x"));
    const since = Date.now() - 1_000;
    const first = await openAiBatch.submit(endpoint, [line], "lost-first");
    for (let i = 0; i < 120; i++) await openAiBatch.submit(endpoint, [line], `later-${i}`);
    expect(await openAiBatch.find(endpoint, "lost-first", since)).toBe(first);
  });
});

describe("a batch's lines and the lost-work sweep", () => {
  it("knows a running task as a batch's line by its token, not by its stage's work (which auto may have made realtime)", async () => {
    const { isBatchLine } = await import("../../src/engine/executors");
    expect(isBatchLine({ token: "batch:b1", batch_id: "b1" })).toBe(true);
    expect(isBatchLine({ token: "k3j2", batch_id: "b1" })).toBe(false); // left the batch for a realtime call: swept like one
    expect(isBatchLine({ token: "k3j2", batch_id: null })).toBe(false);
    expect(isBatchLine({ token: null, batch_id: "b1" })).toBe(false);
  });
});
