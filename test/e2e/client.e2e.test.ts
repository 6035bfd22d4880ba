/** The TypeScript client against a running Fanout and the fake model server. */
import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { Fanout, FanoutError, type MapResult } from "../../client/src/index.ts";
import { fake, newTenant } from "./harness/api.ts";
import { base, fakeStats, uniqueTag } from "./harness/context.ts";

const Echo = z.object({ echo: z.string().transform((s) => s.toUpperCase()), length: z.number().int() });

async function client(options: { fetch?: typeof fetch } = {}) {
  const { key } = await newTenant(base());
  return new Fanout({ apiKey: key, baseUrl: base(), ...options });
}

const inputs = (tag: string, steps: string[]) => steps.map((s, i) => ({ text: `item ${i}`, d: fake(tag, i, s) }));

describe("client: map", () => {
  it("iterates results in completion order and fires every event callback", async () => {
    const fanout = await client();
    const tag = uniqueTag("client-order");
    const seen: string[] = [];
    const job = fanout.map({
      inputs: inputs(tag, ["slow:600", "ok", "slow:300"]),
      promptTemplate: "Summarize {{ item.text }} {{ item.d }}",
      outputSchema: Echo,
      model: "openai/gpt-6-luna",
      concurrency: 3,
      onEvent: {
        MAP_STARTED: (e) => seen.push(`started ${e.total}`),
        MAP_ITEM_COMPLETED: (e) => seen.push(`item ${e.result.index}`),
        MAP_COMPLETED: (e) => seen.push(`completed ${e.status}`),
      },
    });
    const results: MapResult<z.infer<typeof Echo>>[] = [];
    for await (const result of job) results.push(result);
    expect(results.map((r) => r.index)).toEqual([1, 2, 0]);
    expect(results[0]?.output).toEqual({ echo: "SUMMARIZE ITEM 1", length: 16 }); // parsed by the zod schema on arrival
    expect(seen).toEqual(["started 3", "item 1", "item 2", "item 0", "completed completed"]);
    expect((await job.status()).status).toBe("completed");
  });

  it("types outputs from a zod schema", async () => {
    const fanout = await client();
    const job = fanout.map({ inputs: ["a"], promptTemplate: "{{ item }}", outputSchema: Echo, model: "openai/x" });
    for await (const r of job) expectTypeOf(r.output).toEqualTypeOf<{ echo: string; length: number } | null>();
    const untyped = fanout.map({ inputs: ["a"], promptTemplate: "{{ item }}", outputSchema: { type: "object" }, model: "openai/x" });
    const batch = await untyped.runAll();
    expectTypeOf(batch.successes[0]!.output).toEqualTypeOf<unknown>();
  });

  it("reconnects after a dropped stream with Last-Event-ID: nothing lost, nothing repeated", async () => {
    let dropped = 0;
    const lastEventIds: (string | null)[] = [];
    // A fetch whose event streams break after two chunks, twice: a flaky network between client and API.
    const flaky: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (!String(input).endsWith("/events")) return res;
      lastEventIds.push(new Headers(init?.headers).get("last-event-id"));
      if (dropped >= 2 || !res.body) return res;
      dropped++;
      const reader = res.body.getReader();
      let chunks = 0;
      const broken = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const { value, done } = await reader.read();
          if (done) return controller.close();
          controller.enqueue(value);
          if (++chunks >= 2) {
            await reader.cancel();
            controller.error(new TypeError("network connection lost"));
          }
        },
      });
      return new Response(broken, { status: res.status, headers: res.headers });
    };
    const fanout = await client({ fetch: flaky });
    const tag = uniqueTag("client-reconnect");
    const job = fanout.map({
      inputs: inputs(tag, Array(8).fill("slow:300")),
      promptTemplate: "Summarize {{ item.text }} {{ item.d }}",
      model: "openai/gpt-6-luna",
      concurrency: 1, // a 2.4 s job: both drops happen while it runs
    });
    const indexes: number[] = [];
    for await (const result of job) indexes.push(result.index);
    expect(dropped).toBe(2);
    expect(lastEventIds.length).toBeGreaterThanOrEqual(3);
    expect(lastEventIds.slice(1).every((id) => id !== null && Number(id) > 0)).toBe(true);
    expect(indexes).toHaveLength(8);
    expect(new Set(indexes).size).toBe(8);
  });

  it("runAll returns successes, failures, total and totalAttempts", async () => {
    const fanout = await client();
    const tag = uniqueTag("client-runall");
    const batch = await fanout
      .map({ inputs: inputs(tag, ["ok", "401", "prose,ok"]), promptTemplate: "Summarize {{ item.text }} {{ item.d }}", outputSchema: Echo, model: "openai/x" })
      .runAll();
    expect(batch.successes.map((r) => r.index)).toEqual([0, 2]);
    expect(batch.failures.map((r) => [r.index, r.error_kind])).toEqual([[1, "llm_error"]]);
    expect(batch).toMatchObject({ total: 3, totalAttempts: 4, jobId: expect.stringMatching(/^job_/) });
    expect(batch.successes[0]?.output?.echo).toBe("SUMMARIZE ITEM 0");
  });

  it("cancels, reports status and reads results in either order", async () => {
    const fanout = await client();
    const tag = uniqueTag("client-cancel");
    const job = fanout.map({
      inputs: inputs(tag, Array(20).fill("slow:300")),
      promptTemplate: "{{ item.text }} {{ item.d }}",
      model: "openai/x",
      concurrency: 2,
    });
    const first: number[] = [];
    for await (const result of job) {
      first.push(result.index);
      if (first.length === 2) break;
    }
    expect((await job.cancel()).status).toBe("cancelled");
    const byInput = await job.results();
    const byCompletion = await job.results({ order: "completion" });
    expect(byInput.map((r) => r.index)).toEqual([...byInput.map((r) => r.index)].sort((a, b) => a - b));
    expect(new Set(byCompletion.map((r) => r.index))).toEqual(new Set(byInput.map((r) => r.index)));
    expect(byInput.length).toBeLessThan(20);
    expect((await fakeStats(tag)).requests).toBeLessThan(20);
  });

  it("maps API errors to FanoutError with status, code and details", async () => {
    const fanout = await client();
    const bad = fanout.map({ inputs: ["a"], promptTemplate: "no variable here", model: "openai/x" });
    const err = await bad.runAll().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FanoutError);
    expect(err).toMatchObject({ status: 400, code: "template_missing_item", details: [{ path: "prompt_template" }] });
    const unauthorized = new Fanout({ apiKey: "fo_wrong", baseUrl: base() });
    await expect(unauthorized.jobs()).rejects.toMatchObject({ name: "FanoutError", status: 401, code: "unauthorized" });
    await expect(fanout.job("job_missing").status()).rejects.toMatchObject({ status: 404, code: "not_found" });
  });
});

describe("client: agenticMap", () => {
  it("runs sub-sessions and returns AgentMapResults", async () => {
    const fanout = await client();
    const tag = uniqueTag("client-agent");
    const batch = await fanout
      .agenticMap({
        inputs: [{ d: fake(tag, 0, "text:first,text:done_DONE") }],
        agentPromptTemplate: "Work {{ item.d }}",
        model: "openai/x",
        continuationMessage: "more",
        completionMarker: "DONE",
      })
      .runAll();
    expect(batch.successes[0]).toMatchObject({ stop_reason: "natural", turns: 2, output_text: "done DONE", session_id: expect.stringMatching(/^ses_/) });
  });
});
