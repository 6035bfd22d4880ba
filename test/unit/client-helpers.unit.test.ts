import { describe, expect, it } from "vitest";
import { parseCsv } from "../../client/src/csv.ts";
import { describe as describeProgress, pacingWords, Progress, trackConcurrency, trackPacing } from "../../client/src/progress.ts";
import type { EventHandlers } from "../../client/src/types.ts";
import { stepToApi, toApi } from "../../client/src/spelling.ts";
import type { FilterOptions, MapReduceOptions, PipelineOptions, PipelineStep, ReduceOptions } from "../../client/src/types.ts";

const stepBody = (step: PipelineStep) => stepToApi(step as Record<string, unknown>);

describe("CSV input", () => {
  it("reads quoted fields, doubled quotes, commas and newlines inside quotes, CRLF", () => {
    const text = 'title,notes\r\n"A, B","said ""hi"""\r\nplain,"two\nlines"\r\n\r\n';
    expect(parseCsv(text)).toEqual([
      { title: "A, B", notes: 'said "hi"' },
      { title: "plain", notes: "two\nlines" },
    ]);
  });

  it("fills missing trailing fields and handles no final newline", () => {
    expect(parseCsv("a,b,c\n1,2")).toEqual([{ a: "1", b: "2", c: "" }]);
    expect(parseCsv("")).toEqual([]);
  });
});

describe("progress", () => {
  it("describes done/total, failures, rate and ETA", () => {
    expect(describeProgress({ done: 50, failed: 2, total: 200 }, 10_000)).toBe("50/200 done, 2 failed, 5.0/s, ETA 30s");
    expect(describeProgress({ done: 0, failed: 0, total: 10 }, 1_000)).toBe("0/10 done, 0 failed, 0.0/s, ETA ?");
  });

  it("shows the calls at once once the provider's limit changed them", () => {
    const state = { done: 50, failed: 0, total: 200, concurrency: { calls: 8, reason: "throttled" } };
    expect(describeProgress(state, 10_000)).toBe("50/200 done, 0 failed, 5.0/s, ETA 30s, 8 calls at once (throttled)");
  });

  it("writes a line at once when the job's calls at once change", () => {
    const written: string[] = [];
    const plain = new Progress({ isTTY: false, write: (s: string) => written.push(s) } as unknown as NodeJS.WriteStream);
    const state = { done: 0, failed: 0, total: 4 };
    let handler: EventHandlers<unknown>["CONCURRENCY_CHANGED"];
    trackConcurrency({ on: (h) => (handler = h.CONCURRENCY_CHANGED) }, state, plain);
    plain.update(state, true);
    handler?.({ job_id: "job_x", effective_concurrency: 3, reason: "throttled" }); // within 2 s of the last line: written all the same
    expect(written).toEqual([expect.stringMatching(/^progress: 0\/4 done/), expect.stringMatching(/, 3 calls at once \(throttled\)\n$/)]);
  });

  it("says what paces the job, with a line at once when it changes, and nothing once nothing does", () => {
    expect(pacingWords({ rpm: 600, tpm: 200_000, source: "headers", share: 1 })).toBe("600 requests/min · 200,000 tokens/min (the provider's headers)");
    expect(pacingWords({ rpm: 1_200, tpm: null, source: "declared", share: 0.5 })).toBe("1,200 requests/min (declared limits, 50 % of it)");
    expect(pacingWords({ rpm: null, tpm: null, source: null, share: null })).toBeUndefined();
    const written: string[] = [];
    const plain = new Progress({ isTTY: false, write: (s: string) => written.push(s) } as unknown as NodeJS.WriteStream);
    const state = { done: 0, failed: 0, total: 4 };
    let handler: EventHandlers<unknown>["PACING_CHANGED"];
    trackPacing({ on: (h) => (handler = h.PACING_CHANGED) }, state, plain);
    handler?.({ job_id: "job_x", pacing: { rpm: 600, tpm: null, source: "job", share: 1 } });
    expect(written).toEqual([expect.stringMatching(/, paced at 600 requests\/min \(the job's rate_limit\)\n$/)]);
    handler?.({ job_id: "job_x", pacing: { rpm: null, tpm: null, source: null, share: null } });
    expect(written.at(-1)).not.toContain("paced at");
  });

  it("redraws one line on a terminal and writes plain lines otherwise", () => {
    const written: string[] = [];
    const fakeStream = (isTTY: boolean) => ({ isTTY, write: (s: string) => written.push(s) }) as unknown as NodeJS.WriteStream;
    const tty = new Progress(fakeStream(true));
    tty.update({ done: 1, failed: 0, total: 2 });
    expect(written.pop()).toMatch(/^\r\[#{15}-{15}\] 1\/2 done/);
    const plain = new Progress(fakeStream(false));
    plain.update({ done: 1, failed: 0, total: 2 }, true);
    plain.update({ done: 2, failed: 0, total: 2 }); // within 2 s of the last line: not written
    expect(written).toEqual([expect.stringMatching(/^progress: 1\/2 done/)]);
    plain.update({ done: 2, failed: 0, total: 2 }, true); // the final line
    plain.update({ done: 2, failed: 0, total: 2 }, true); // the same counts again: not written twice
    expect(written).toEqual([expect.stringMatching(/^progress: 1\/2 done/), expect.stringMatching(/^progress: 2\/2 done/)]);
  });

  it("says one batch request in the singular", async () => {
    const { trackBatches } = await import("../../client/src/progress.ts");
    const written: string[] = [];
    let handlers: Record<string, (e: unknown) => void> = {};
    trackBatches({ on: (h: Record<string, (e: unknown) => void>) => (handlers = h) } as never, { write: (s: string) => written.push(s) } as never);
    handlers.BATCH_SUBMITTED?.({ batch: { id: "b1", provider_batch_id: "batch_1", requests: 1, stage: "items" } });
    handlers.BATCH_SUBMITTED?.({ batch: { id: "b2", provider_batch_id: "batch_2", requests: 2, stage: "items" } });
    expect(written).toEqual([
      "batch b1: sent to the provider (batch_1), 1 request of stage items\n",
      "batch b2: sent to the provider (batch_2), 2 requests of stage items\n",
    ]);
  });
});

describe("an unreachable server", () => {
  it("is an error that names the server's URL and the cause", async () => {
    const { Fanout } = await import("../../client/src/index.ts");
    const refused = Object.assign(new TypeError("fetch failed"), { cause: { code: "ECONNREFUSED" } });
    const client = new Fanout({ apiKey: "fo_x", baseUrl: "http://127.0.0.1:9/", fetch: async () => Promise.reject(refused) });
    await expect(client.request("GET", "/v1/jobs")).rejects.toMatchObject({
      status: 0,
      code: "unreachable",
      message: "Could not reach the Fanout server at http://127.0.0.1:9 (ECONNREFUSED). Is it running? Set FANOUT_URL or --url.",
    });
  });
});

describe("pipeline operator steps in the API's spelling", () => {
  it("sends each operator step's list, its call fields and the operator's own fields, and nothing unset", () => {
    const common = { inputsFrom: "${papers}", contextManagement: { inheritContext: "none" as const }, inputs: { topic: "ML" } };
    expect(
      stepBody({
        id: "screen",
        type: "filter",
        ...common,
        predicateTemplate: "{{ item }}",
        cascade: { model: "openai/small", acceptAbove: 0.8 },
        execution: { mode: "batch" },
      }),
    ).toEqual({
      id: "screen",
      type: "filter",
      context_management: { inherit_context: "none" },
      inputs: { topic: "ML" },
      inputs_from: "${papers}",
      predicate_template: "{{ item }}",
      cascade: { model: "openai/small", accept_above: 0.8 },
      execution: { mode: "batch" },
    });
    expect(
      stepBody({
        id: "labels",
        type: "classify",
        inputsFrom: "${x}",
        categories: [{ name: "a" }, { name: "b" }],
        multiLabel: true,
        model: "openai/m",
        timeoutSecs: 30,
      }),
    ).toEqual({
      id: "labels",
      type: "classify",
      inputs_from: "${x}",
      categories: [{ name: "a" }, { name: "b" }],
      multi_label: true,
      model: "openai/m",
      timeout_secs: 30,
    });
    expect(stepBody({ id: "best", type: "rank", inputsFrom: "${x}", criteria: "c", k: 2, comparisonTemplate: "{{ item_a }} {{ item_b }}" })).toEqual({
      id: "best",
      type: "rank",
      inputs_from: "${x}",
      criteria: "c",
      k: 2,
      comparison_template: "{{ item_a }} {{ item_b }}",
    });
    expect(
      stepBody({
        id: "e",
        type: "resolve",
        inputsFrom: "${x}",
        comparisonTemplate: "t",
        blocking: { keys: ["name"], method: "prefix", threshold: 3 },
        maxComparisons: 50,
      }),
    ).toEqual({
      id: "e",
      type: "resolve",
      inputs_from: "${x}",
      comparison_template: "t",
      blocking: { keys: ["name"], method: "prefix", threshold: 3 },
      max_comparisons: 50,
    });
  });
});

describe("the client's options are the API's request fields in camelCase", () => {
  it("spells every key back in snake_case, all the way down, and leaves out what is unset", () => {
    const options: ReduceOptions = {
      model: "openai/m",
      inputs: [{ a: 1 }],
      tokenBudget: { total: 100, onExhausted: "fail" },
      cache: { ttlSecs: 60 },
      maxWaitSecs: 30,
      rateLimit: { rpm: 600 }, // fields the hand-written options once lacked: derived, they cannot be missed
      reductionTask: { promptTemplate: "{{ accumulator }} {{ current_result }}", maxTokens: 50 },
      innerTask: undefined,
    };
    expect(toApi(options)).toEqual({
      model: "openai/m",
      inputs: [{ a: 1 }],
      token_budget: { total: 100, on_exhausted: "fail" },
      cache: { ttl_secs: 60 },
      max_wait_secs: 30,
      rate_limit: { rpm: 600 },
      reduction_task: { prompt_template: "{{ accumulator }} {{ current_result }}", max_tokens: 50 },
    });
  });

  it("sends the user's data as given: items, metadata, JSON Schemas, an initial value", () => {
    const data = { itemKey: 1, nested: { camelCase: true } };
    const schema = { type: "object", properties: { someField: { type: "string" } }, additionalProperties: false };
    const options: MapReduceOptions = {
      model: "openai/m",
      inputs: [data],
      metadata: { runBy: "ci" },
      mapper: { promptTemplate: "{{ item }}", outputSchema: schema },
      reducer: { promptTemplate: "r" },
      shuffle: { dedupeFields: ["a"] },
      tokenBudget: { allocation: { map: 1, shuffle: 0, reduce: 1, synthesis: 1 } },
    };
    expect(toApi(options)).toEqual({
      model: "openai/m",
      inputs: [data],
      metadata: { runBy: "ci" },
      mapper: { prompt_template: "{{ item }}", output_schema: schema },
      reducer: { prompt_template: "r" },
      shuffle: { dedupe_fields: ["a"] },
      token_budget: { allocation: { map: 1, shuffle: 0, reduce: 1, synthesis: 1 } },
    });
    const filter: FilterOptions = {
      model: "openai/m",
      inputs: [{ keepMe: true }],
      predicateTemplate: "{{ item }}",
      cascade: { model: "openai/small", acceptAbove: 0.9, rejectBelow: 0.1 },
    };
    expect(toApi(filter)).toEqual({
      model: "openai/m",
      inputs: [{ keepMe: true }],
      predicate_template: "{{ item }}",
      cascade: { model: "openai/small", accept_above: 0.9, reject_below: 0.1 },
    });
  });

  it("re-spells a step's input tasks and nested steps, not the pipeline's own inputs", () => {
    const pipeline: PipelineOptions = {
      model: "openai/m",
      inputs: { doc: { task: { notATask: true } } }, // the store's data, whatever its shape
      steps: [
        {
          id: "outer",
          type: "sequential",
          steps: [
            {
              id: "inner",
              type: "llm",
              promptTemplate: "{{ doc }} {{ facts }}",
              inputs: { facts: { task: { promptTemplate: "list {{ doc }}", maxTokens: 20, inputs: { someVar: 1 } } }, literal: { keyName: 2 } },
            },
          ],
        },
      ],
    };
    const body = { ...(toApi({ ...pipeline, steps: undefined }) as object), steps: pipeline.steps.map(stepBody) };
    expect(body).toEqual({
      model: "openai/m",
      inputs: { doc: { task: { notATask: true } } },
      steps: [
        {
          id: "outer",
          type: "sequential",
          steps: [
            {
              id: "inner",
              type: "llm",
              prompt_template: "{{ doc }} {{ facts }}",
              inputs: { facts: { task: { prompt_template: "list {{ doc }}", max_tokens: 20, inputs: { someVar: 1 } } }, literal: { keyName: 2 } },
            },
          ],
        },
      ],
    });
  });
});

describe("the client's methods come from the server's operators", () => {
  it("has a method per operator of the server (client/src/operators.ts, generated from the registry and checked by `npm run typecheck`), which sends its options to the operator's route in the API's spelling", async () => {
    const { Fanout } = await import("../../client/src/index.ts");
    const { OPERATORS } = await import("../../client/src/operators.ts");
    const sent: { url: string; body: unknown; key: string | null }[] = [];
    const fetch = async (url: string | URL | Request, init?: RequestInit) => {
      sent.push({ url: String(url), body: JSON.parse(String(init?.body)), key: new Headers(init?.headers).get("idempotency-key") });
      return new Response(JSON.stringify({ job_id: "job_1" }), { status: 202, headers: { "content-type": "application/json" } });
    };
    const client = new Fanout({ apiKey: "fo_x", baseUrl: "http://fanout.test", fetch: fetch as typeof globalThis.fetch }) as unknown as Record<
      string,
      (o: unknown) => { id(): Promise<string> }
    >;
    expect(Object.keys(OPERATORS)).toEqual([
      "map",
      "agenticMap",
      "reduce",
      "mapReduce",
      "pipeline",
      "filter",
      "classify",
      "rank",
      "resolve",
      "evaluation",
      "embed",
      "join",
    ]);
    for (const method of Object.keys(OPERATORS)) expect(typeof client[method], method).toBe("function");
    // A method made from the list (no line of its own in the client): its fields spelled, its idempotency key a header.
    await client.rank!({
      model: "openai/m",
      inputs: ["a", "b"],
      criteria: "c",
      k: 1,
      comparisonTemplate: "{{ item_a }}",
      maxWaitSecs: 5,
      idempotencyKey: "k1",
    }).id();
    expect(sent.at(-1)).toEqual({
      url: "http://fanout.test/v1/rank",
      body: { model: "openai/m", inputs: ["a", "b"], criteria: "c", k: 1, comparison_template: "{{ item_a }}", max_wait_secs: 5 },
      key: "k1",
    });
  });
});
