/** The fake model server speaks both wire formats well enough for the official SDKs, plain and streaming. */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeModelServer, type FakeModelServer } from "../fake-model/server.ts";

let fake: FakeModelServer;
beforeAll(async () => {
  fake = await startFakeModelServer();
});
afterAll(() => fake.close());

const prompt = "Describe cats <<fake tag=unit id=1 steps=ok>>";

describe("fake model server", () => {
  it("answers OpenAI chat completions, plain and streamed", async () => {
    const client = new OpenAI({ apiKey: "k", baseURL: `${fake.url}/v1`, maxRetries: 0 });
    const plain = await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: prompt }] });
    expect(JSON.parse(plain.choices[0]?.message.content ?? "")).toEqual({ echo: "Describe cats", length: 13 });
    expect(plain.usage?.prompt_tokens).toBeGreaterThan(0);
    const stream = await client.chat.completions.create({ model: "m", stream: true, messages: [{ role: "user", content: prompt }] });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(JSON.parse(text)).toEqual({ echo: "Describe cats", length: 13 });
  });

  it("answers Anthropic messages, plain, streamed and with a forced tool", async () => {
    const client = new Anthropic({ apiKey: "k", baseURL: fake.url, maxRetries: 0 });
    const plain = await client.messages.create({ model: "m", max_tokens: 100, messages: [{ role: "user", content: prompt }] });
    expect(plain.content[0]).toMatchObject({ type: "text" });
    const streamed = await client.messages.stream({ model: "m", max_tokens: 100, messages: [{ role: "user", content: prompt }] }).finalMessage();
    expect(streamed.content[0]).toMatchObject({ type: "text", text: JSON.stringify({ echo: "Describe cats", length: 13 }) });
    const tool = await client.messages.create({
      model: "m",
      max_tokens: 100,
      messages: [{ role: "user", content: prompt }],
      tools: [
        {
          name: "output",
          input_schema: {
            type: "object",
            properties: { topic: { type: "string" }, tags: { type: "array", items: { type: "string" } }, n: { type: "integer" }, kind: { enum: ["a", "b"] } },
          },
        },
      ],
      tool_choice: { type: "tool", name: "output" },
    });
    // It honours the requested schema: strings echo the prompt, numbers are its length.
    expect(tool.content[0]).toMatchObject({ type: "tool_use", name: "output", input: { topic: "Describe cats", tags: ["Describe cats"], n: 13, kind: "a" } });
  });

  it("scripts faults per item and counts them per tag", async () => {
    const client = new OpenAI({ apiKey: "k", baseURL: `${fake.url}/v1`, maxRetries: 0 });
    const scripted = "x <<fake tag=unit-faults id=7 steps=429:3,500,ok>>";
    const ask = () => client.chat.completions.create({ model: "m", messages: [{ role: "user", content: scripted }] });
    await expect(ask()).rejects.toMatchObject({ status: 429 });
    await expect(ask()).rejects.toMatchObject({ status: 500 });
    await expect(ask()).resolves.toBeTruthy();
    const stats = await (await fetch(`${fake.url}/_fake/stats?tag=unit-faults`)).json();
    expect(stats).toMatchObject({ requests: 3, max_in_flight: 1, in_flight: 0 });
  });
});
