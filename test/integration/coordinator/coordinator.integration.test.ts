/**
 * The JobCoordinator at the Durable Object level: stale reports, stage transitions of a fold,
 * reservations that do not fit, a failed final flush, and recover/resume in every state.
 */
import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import type { MapJobSpec } from "../../../src/operators/map/plan";
import type { ReduceJobSpec } from "../../../src/operators/reduce/plan";
import type { AgentJobSpec } from "../../../src/operators/agentic-map/plan";
import { base, call, endJob, events, failed, insertJobRow, meta, ok, report, startJob, takeOver, tasks, tick } from "./drive";
import type { AttemptOutcome } from "../../../src/engine/retry-policy";

const NO_RECOVER = { model: null, maxRetries: null, timeoutMs: null, errorKinds: null, budget: null };

const mapSpec =
  (over: Partial<MapJobSpec> = {}) =>
  (jobId: string, tenantId: string): MapJobSpec => ({
    ...base(jobId, tenantId),
    type: "map",
    call: call(),
    ...over,
  });

/**
 * A map job on a model of its own: a throttle cuts the adaptive limit of its credential and model,
 * and every test's jobs use the deployment's key — on the shared model it would cut the next tests' jobs.
 */
const throttledSpec = () => {
  const model = `openai-compatible/throttled-${crypto.randomUUID()}`;
  return mapSpec({ model, call: call({ model }) });
};

const reduceSpec = (jobId: string, tenantId: string): ReduceJobSpec => ({
  ...base(jobId, tenantId),
  type: "reduce",
  inner: call({ promptTemplate: "{{ item }}" }),
  reduction: call({ promptTemplate: "{{ accumulator }} {{ current_result }}" }),
  initialValue: "init",
  total: 2,
});

describe("the drive: only the test's reports count", () => {
  it("holds a started job's first alarm for the test's tick: the runtime does not begin the job by itself", async () => {
    const { stub } = await startJob(mapSpec(), ["a"]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await meta(stub, "status")).toBe("queued");
    expect((await tick(stub)).map((r) => r.state)).toEqual(["running"]);
  });

  it("leaves the job's own workers waiting on the model, so none of them reports before the takeover", async () => {
    // Their endpoint never answers (model-tarpit.ts). With one that fails at once, both items
    // ended with the config error in ~50 ms, racing every takeover below.
    const { stub } = await startJob(mapSpec(), ["a", "b"]);
    await runDurableObjectAlarm(stub);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await tasks(stub)).map((r) => [r.state, r.attempts])).toEqual([
      ["running", 1],
      ["running", 1],
    ]);
    expect((await events(stub)).map((e) => e.name)).toEqual(["MAP_STARTED"]);
  });
});

describe("coordinator: reports", () => {
  it("ignores a report with a stale token and a second report of the same dispatch", async () => {
    const { stub, jobId } = await startJob(mapSpec(), ["a"]);
    const [task] = await tick(stub);
    expect(task).toMatchObject({ state: "running", attempts: 1 });
    await report(stub, "items", 0, ok("x"), "not-the-token");
    expect((await tasks(stub))[0]).toMatchObject({ state: "running", attempts: 1 });
    await report(stub, "items", 0, ok("x"));
    await report(stub, "items", 0, ok("y")); // the same dispatch again: stale now
    const names = (await events(stub)).map((e) => e.name);
    expect(names).toEqual(["MAP_STARTED", "MAP_ITEM_COMPLETED", "MAP_COMPLETED"]);
    const row = await env.DB.prepare("SELECT data FROM results WHERE job_id = ?").bind(jobId).all<{ data: string }>();
    expect(row.results.map((r) => JSON.parse(r.data).output)).toEqual(["x"]);
  });
});

describe("coordinator: a report that waits on the provider limiter", () => {
  it("is dropped when the job ends while the limiter answers: the ended job's task is not retried, and no event follows the end", async () => {
    const { stub } = await startJob(throttledSpec(), ["a", "b"]);
    await tick(stub);
    const throttled: AttemptOutcome = { kind: "transient", error: "429", retryAfterMs: 1_000, throttled: true, usage: { input_tokens: 0, output_tokens: 0 } };
    const reported = report(stub, "items", 0, throttled); // asks the limiter, and waits for its answer
    expect(await stub.cancel()).toBe(true);
    await reported;
    const rows = await tasks(stub);
    expect(rows.map((r) => r.state)).toEqual(["pending", "pending"]); // released by the end, not put back to wait for a retry
    const log = await events(stub);
    expect(log.map((e) => e.name)).toEqual(["MAP_STARTED", "MAP_COMPLETED"]); // nothing after the end, not even the limiter's change
    expect(log.at(-1)?.data).toMatchObject({ status: "cancelled", completed: 0 });
  });
});

describe("coordinator: a rate-limited task's retry", () => {
  it("waits for its Retry-After and is due by the coordinator's own alarm, not by the Queue's backup message (whole seconds, batched)", async () => {
    const { stub } = await startJob(throttledSpec(), ["a"]);
    await tick(stub);
    const before = Date.now();
    const throttled: AttemptOutcome = { kind: "transient", error: "429", retryAfterMs: 1_000, throttled: true, usage: { input_tokens: 0, output_tokens: 0 } };
    await report(stub, "items", 0, throttled);
    const { readyAt, alarm } = await runInDurableObject(stub, (_i, state) => ({
      readyAt: state.storage.sql.exec<{ ready_at: number }>("SELECT ready_at FROM tasks WHERE state = 'waiting'").one().ready_at,
      alarm: state.storage.getAlarm(),
    }));
    // Retry-After 1 s plus jitter of up to half of it.
    expect(readyAt - before).toBeGreaterThanOrEqual(1_000);
    expect(readyAt - Date.now()).toBeLessThanOrEqual(1_500);
    expect(await alarm).toBeLessThanOrEqual(readyAt);
  });
});

describe("coordinator: a worker's report takes its next task (pull)", () => {
  it("answers with the slot's next task, claimed and running under a new token, with the stage's setup only when the worker lacks it", async () => {
    const { stub } = await startJob(mapSpec({ concurrency: 1 }), ["a", "b", "c"]);
    await tick(stub);
    const first = (await stub.report({ stage: "items", index: 0, token: "test-items-0" }, ok("x"), { have: [] })) as any;
    expect(first.ref).toMatchObject({ stage: "items", index: 1, slot: 0, attempt: 1, round: 1 });
    expect(first.claim.vars).toEqual({ item: "b" });
    expect(first.setup.work.call.promptTemplate).toBe("{{ item }}");
    expect(first.setup.endpoint).toMatchObject({ policy: false });
    const running = (await tasks(stub)).find((t) => t.idx === 1);
    expect(running).toMatchObject({ state: "running", token: first.ref.token });
    // The worker holds the stage now: no setup. A stale report of the same dispatch gets nothing.
    const second = (await stub.report({ stage: "items", index: 1, token: first.ref.token }, ok("y"), { have: ["1:items"] })) as any;
    expect(second.ref.index).toBe(2);
    expect(second.setup).toBeNull();
    expect(await stub.report({ stage: "items", index: 1, token: first.ref.token }, ok("y"), { have: [] })).toBeNull();
    // Without pull the next task goes through `begin` (the real worker's claim would be stale after a takeover).
    expect(await stub.report({ stage: "items", index: 2, token: second.ref.token }, ok("z"))).toBeNull();
    expect((await events(stub)).at(-1)?.name).toBe("MAP_COMPLETED");
  });

  it("answers a repeated report with the slot's running task again, only for that slot in this round, without counting an attempt", async () => {
    const { stub } = await startJob(mapSpec({ concurrency: 2 }), ["a", "b", "c", "d"]);
    await tick(stub); // items 0 and 1 run on slots 0 and 1
    const pull = (slot: number, round = 1) => ({ have: ["1:items"], slot, round });
    const first = (await stub.report({ stage: "items", index: 0, token: "test-items-0" }, ok("x"), pull(0))) as any;
    expect(first.ref).toMatchObject({ index: 2, slot: 0, attempt: 1 });
    // The same report again (its answer was lost, the worker says so): item 2 again, under the same token, no setup asked for.
    const again = (await stub.report({ stage: "items", index: 0, token: "test-items-0" }, ok("x"), { ...pull(0), unanswered: true })) as any;
    expect(again).toEqual(first);
    // Not to a worker of an earlier round: after a recover, slot 0 may be another object.
    expect(await stub.report({ stage: "items", index: 0, token: "test-items-0" }, ok("x"), pull(0, 0))).toBeNull();
    // Nor from a worker of an earlier deploy, which does not say its slot.
    expect(await stub.report({ stage: "items", index: 0, token: "test-items-0" }, ok("x"), { have: [] })).toBeNull();
    expect((await tasks(stub)).map((t) => [t.idx, t.state, t.attempts])).toEqual([
      [0, "done", 1],
      [1, "running", 1],
      [2, "running", 1],
      [3, "pending", 0],
    ]);
    // Slot 0 goes on: item 3, then nothing is left to hand out.
    const third = (await stub.report({ stage: "items", index: 2, token: first.ref.token }, ok("z"), pull(0))) as any;
    expect(third.ref).toMatchObject({ index: 3, slot: 0 });
    await stub.report({ stage: "items", index: 3, token: third.ref.token }, ok("w"), pull(0));
    // A repeated report of item 3 gets nothing: no task runs on slot 0 (slot 1's item 1 is not handed over).
    expect(await stub.report({ stage: "items", index: 3, token: third.ref.token }, ok("w"), pull(0))).toBeNull();
    expect((await tasks(stub)).map((t) => [t.idx, t.state, t.attempts])).toEqual([
      [0, "done", 1],
      [1, "running", 1],
      [2, "done", 1],
      [3, "done", 1],
    ]);
  });
});

describe("coordinator: agent subtasks", () => {
  const agentSpec = (jobId: string, tenantId: string): AgentJobSpec => ({
    ...base(jobId, tenantId),
    type: "agentic_map",
    concurrency: 1,
    agent: {
      model: "openai-compatible/m",
      promptTemplate: "{{ item }}",
      systemPrompt: null,
      temperature: null,
      maxTokens: 10,
      timeoutMs: 60_000,
      maxRetries: 0,
      maxTurns: 3,
      continuationMessage: "",
      completionMarker: null,
      readOnly: false,
      tools: [],
      maxContextTokens: null,
      maxTotalTokens: null,
      subtasks: { maxDepth: 5, maxTotalTokens: null, timeoutMs: 60_000 },
    },
  });
  const spawn = {
    sessionId: "ses_child",
    parentSessionId: "ses_parent",
    prompt: "do it",
    depth: 1,
    ancestors: ["f"],
    deadline: Date.now() + 60_000,
    inheritedTokens: 5,
  };

  it("a spawn frees the parent's slot for its child (concurrency 1); the child's end makes the parent pending again; children are not items", async () => {
    const { stub } = await startJob(agentSpec, ["a"]);
    await tick(stub);
    await stub.report({ stage: "items", index: 0, token: "test-items-0" }, { kind: "spawn", spawn, usage: { input_tokens: 3, output_tokens: 2 } });
    let rows = await takeOver(stub);
    expect(rows.map((r) => [r.stage, r.idx, r.state, r.attempts])).toEqual([
      ["items", 0, "child", 0],
      ["items.subtasks", 0, "running", 1],
    ]);
    expect(JSON.parse(rows[1]!.input)).toEqual({ parent: { stage: "items", index: 0 }, spawn });
    const claim = await stub.claim("items.subtasks", 0, "test-items.subtasks-0");
    expect(claim).toEqual({ vars: {}, problems: null, subtask: spawn });
    expect(await stub.work("items.subtasks")).toMatchObject({ kind: "agent" });
    await report(stub, "items.subtasks", 0, ok("child answer"));
    rows = await takeOver(stub);
    expect(rows.map((r) => [r.stage, r.idx, r.state, r.attempts])).toEqual([
      ["items", 0, "running", 1],
      ["items.subtasks", 0, "done", 1],
    ]);
    await report(stub, "items", 0, ok("done"));
    const names = (await events(stub)).map((e) => e.name);
    expect(names).toEqual(["MAP_STARTED", "SUBTASK_STARTED", "SUBTASK_COMPLETED", "MAP_ITEM_COMPLETED", "MAP_COMPLETED"]);
    const completed = (await events(stub)).at(-1)!.data;
    expect(completed).toMatchObject({ total: 1, succeeded: 1, total_attempts: 2 });
    expect(completed.usage).toEqual({
      input_tokens: 3 + 3 + 3,
      output_tokens: 2 + 2 + 2,
      cached_input_tokens: 0,
      cache_write_input_tokens: 0,
      duplicated: { input_tokens: 0, output_tokens: 0, cost_usd: 0 },
      cached: { calls: 0, input_tokens: 0, output_tokens: 0 },
      interrupted: { calls: 0, input_tokens: 0 },
    }); // the spawning report, the child, the last report
  });
});

describe("coordinator: stages of a fold", () => {
  it("releases reduction i only after inner i and reduction i−1, critical path first, then completes with the accumulator", async () => {
    const { stub, jobId } = await startJob(reduceSpec, [
      { name: "0", value: "v0" },
      { name: "1", value: "v1" },
    ]);
    let rows = await tick(stub);
    expect(rows.map((r) => `${r.stage}:${r.idx}:${r.state}`)).toEqual(["inner:0:running", "inner:1:running", "reduction:0:blocked", "reduction:1:blocked"]);
    await report(stub, "inner", 1, ok("I1"));
    expect((await tasks(stub)).find((r) => r.stage === "reduction" && r.idx === 1)?.state).toBe("blocked");
    await report(stub, "inner", 0, ok("I0"));
    rows = await takeOver(stub);
    const r0 = rows.find((r) => r.stage === "reduction" && r.idx === 0);
    expect(r0?.state).toBe("running");
    expect(JSON.parse(r0?.input ?? "{}")).toEqual({ name: "0", original_input: "v0", accumulator: "init", current_result: "I0" });
    await report(stub, "reduction", 0, ok("A0"));
    rows = await takeOver(stub);
    expect(JSON.parse(rows.find((r) => r.stage === "reduction" && r.idx === 1)?.input ?? "{}")).toMatchObject({ accumulator: "A0", current_result: "I1" });
    await report(stub, "reduction", 1, ok("A1"));
    const log = await events(stub);
    expect(log.map((e) => e.name)).toEqual([
      "MAP_STARTED",
      "STAGE_STARTED",
      "TASK_COMPLETED",
      "TASK_COMPLETED",
      "STAGE_COMPLETED",
      "STAGE_STARTED",
      "TASK_COMPLETED",
      "TASK_COMPLETED",
      "STAGE_COMPLETED",
      "MAP_COMPLETED",
    ]);
    expect(log.at(-1)?.data).toMatchObject({ status: "completed", output: "A1", error: null, total: 4, succeeded: 4 });
    const job = await env.DB.prepare("SELECT status, output, stages, main_stage FROM jobs WHERE id = ?").bind(jobId).first<Record<string, string>>();
    expect(job).toMatchObject({ status: "completed", output: '"A1"' });
    expect(JSON.parse(job?.stages ?? "[]").map((s: { status: string }) => s.status)).toEqual(["completed", "completed"]);
  });

  it("fails the job at a failed task with its context and keeps the partial accumulator", async () => {
    const { stub } = await startJob(reduceSpec, [
      { name: "a", value: 1 },
      { name: "b", value: 2 },
    ]);
    await tick(stub);
    await report(stub, "inner", 0, ok("I0"));
    await takeOver(stub);
    await report(stub, "reduction", 0, ok("A0"));
    await report(stub, "inner", 1, failed("the provider said no"));
    const end = (await events(stub)).at(-1);
    expect(end).toMatchObject({ name: "MAP_COMPLETED", data: { status: "failed", output: "A0" } });
    expect(end?.data.error).toEqual({ code: "task_failed", message: "the provider said no", stage: "inner", index: 1, step: "b" });
    // Recover re-runs the failed inner task and the reduction it blocked; finished tasks stay done.
    const answer = await stub.recover(NO_RECOVER);
    expect(answer).toEqual({ ok: true, recovering: 2 });
    const rows = await takeOver(stub);
    expect(rows.map((r) => `${r.stage}:${r.idx}:${r.state}:${r.attempts}`)).toEqual([
      "inner:0:done:1",
      "inner:1:running:1",
      "reduction:0:done:1",
      "reduction:1:blocked:0",
    ]);
  });
});

describe("coordinator: budgets", () => {
  it("pauses when a reservation does not fit, stays paused on a resume that still does not fit, and goes on with a larger one", async () => {
    const budget = { total: 5, onExhausted: "pause" as const };
    const { stub, jobId } = await startJob(mapSpec({ budget }), ["a", "b"]);
    const rows = await tick(stub);
    expect(rows.every((r) => r.state === "pending")).toBe(true); // 1 prompt token + 10 output > 5
    expect(await meta(stub, "status")).toBe("paused");
    expect(await runInDurableObject(stub, (_i, state) => state.storage.getAlarm())).toBeNull(); // nothing to sweep while paused
    const paused = (await events(stub)).find((e) => e.name === "JOB_PAUSED");
    expect(paused?.data).toEqual({ job_id: jobId, reason: "budget_exhausted", budget: { total: 5, spent: 0, reserved: 0, by_stage: {}, usd: null } });
    expect(await stub.resume(null)).toEqual({ ok: true });
    expect(await meta(stub, "status")).toBe("paused");
    expect(await stub.resume({ total: 1_000 })).toEqual({ ok: true });
    const running = await takeOver(stub);
    expect(running.map((r) => [r.state, r.reserved])).toEqual([
      ["running", 11],
      ["running", 11],
    ]);
    await report(stub, "items", 0, ok("x"));
    await report(stub, "items", 1, ok("y"));
    expect(await meta(stub, "status")).toBe("completed");
    expect(await meta(stub, "spend")).toEqual({ total: 10, by_stage: { items: 10 }, usd: 0 }); // the test's model has no price
    const names = (await events(stub)).map((e) => e.name);
    expect(names.filter((n) => n === "JOB_PAUSED")).toHaveLength(2);
    expect(names.filter((n) => n === "JOB_RESUMED")).toHaveLength(2);
  });

  it("keeps a dollar budget: reserves each dispatch's prompt and output bound at the model's prices, settles to the priced usage, pauses when the next does not fit", async () => {
    // openai-compatible/priced: $0.1 a token in and out (the PRICES of vitest.integration.config.ts).
    const priced = (usd: number) =>
      mapSpec({ model: "openai-compatible/priced", call: call({ model: "openai-compatible/priced" }), budget: { total: null, usd, onExhausted: "pause" } });
    const { stub } = await startJob(priced(2), ["a", "b"]);
    // Each reserves 1 prompt token + 10 output tokens = $1.1: the second does not fit beside the first.
    expect((await tick(stub)).map((r) => r.state)).toEqual(["running", "pending"]);
    await report(stub, "items", 0, ok("x")); // 3 + 2 tokens: $0.5 spent, and $1.1 more fits
    expect((await takeOver(stub)).map((r) => r.state)).toEqual(["done", "running"]);
    await report(stub, "items", 1, ok("y"));
    expect(await meta(stub, "status")).toBe("completed");
    expect(await meta<{ usd: number }>(stub, "spend")).toMatchObject({ total: 10 });
    expect((await meta<{ usd: number }>(stub, "spend"))?.usd).toBeCloseTo(1, 9);
    expect((await meta<{ cost_usd: number }>(stub, "counters"))?.cost_usd).toBeCloseTo(1, 9);

    const small = await startJob(priced(1), ["a"]);
    await tick(small.stub);
    expect(await meta(small.stub, "status")).toBe("paused");
    const paused = (await events(small.stub)).find((e) => e.name === "JOB_PAUSED");
    expect(paused?.data.budget).toEqual({ total: null, spent: 0, reserved: 0, by_stage: {}, usd: { limit: 1, spent: 0, reserved: 0 } });
    expect(await small.stub.resume({ usd: 5 })).toEqual({ ok: true });
    expect((await takeOver(small.stub)).map((r) => r.state)).toEqual(["running"]);
  });

  it("refuses a resume whose dollar limit is not above what the job spent, naming both", async () => {
    const { stub } = await startJob(
      mapSpec({
        model: "openai-compatible/priced",
        call: call({ model: "openai-compatible/priced" }),
        budget: { total: null, usd: 1.2, onExhausted: "pause" },
      }),
      ["a", "b"],
    );
    await tick(stub);
    await report(stub, "items", 0, ok("x")); // $0.5 spent; the next needs $1.1 and only $0.7 is left
    expect(await meta(stub, "status")).toBe("paused");
    const refused = await stub.resume({ usd: 0.5 });
    expect(refused).toMatchObject({ ok: false, details: [{ path: "token_budget.usd", message: expect.stringMatching(/0\.5 is not above .*\$0\.5/) }] });
    expect(await stub.resume({ usd: 3 })).toEqual({ ok: true });
    expect((await takeOver(stub)).map((r) => r.state)).toEqual(["done", "running"]);
  });

  it("fails with budget_exhausted when on_exhausted is fail", async () => {
    const { stub } = await startJob(mapSpec({ budget: { total: 5, onExhausted: "fail" } }), ["a"]);
    await tick(stub);
    expect(await meta(stub, "status")).toBe("failed");
    expect(await meta(stub, "error")).toMatchObject({ code: "budget_exhausted" });
    expect((await events(stub)).at(-1)).toMatchObject({ name: "MAP_COMPLETED", data: { status: "failed" } }); // v1 data: no `error` field
  });
});

describe("coordinator: recover and resume in every state", () => {
  it("answers each with a reason where the state does not allow it", async () => {
    const { stub } = await startJob(mapSpec(), ["a", "b"]);
    expect(await stub.recover(NO_RECOVER)).toMatchObject({ ok: false }); // queued
    await tick(stub);
    expect(await stub.recover(NO_RECOVER)).toMatchObject({ ok: false, reason: expect.stringMatching(/running/) });
    expect(await stub.resume(null)).toMatchObject({ ok: false, reason: expect.stringMatching(/running/) });
    await report(stub, "items", 0, ok("x"));
    expect(await stub.cancel()).toBe(true);
    expect(await stub.resume(null)).toMatchObject({ ok: false, reason: expect.stringMatching(/cancelled/) });
    expect(await stub.recover(NO_RECOVER)).toEqual({ ok: true, recovering: 1 }); // item 1 never finished
    await takeOver(stub);
    await report(stub, "items", 1, ok("y"));
    expect(await meta(stub, "status")).toBe("completed");
    expect(await stub.recover(NO_RECOVER)).toMatchObject({ ok: false, reason: expect.stringMatching(/no failed/) });
    expect(await stub.resume(null)).toMatchObject({ ok: false });
  });

  it("re-runs only failed tasks of the given error kinds, with a fresh attempt count and overrides", async () => {
    const { stub } = await startJob(mapSpec(), ["a", "b", "c"]);
    await tick(stub);
    await report(stub, "items", 0, failed());
    await report(stub, "items", 1, { kind: "permanent", error: "bad", errorKind: "validation", usage: { input_tokens: 1, output_tokens: 1 } });
    await report(stub, "items", 2, ok("z"));
    expect(await stub.recover({ ...NO_RECOVER, errorKinds: ["timeout"] })).toMatchObject({ ok: false });
    expect(await stub.recover({ ...NO_RECOVER, errorKinds: ["validation"], model: "openai-compatible/other" })).toEqual({ ok: true, recovering: 1 });
    const rows = await takeOver(stub);
    expect(rows.map((r) => `${r.idx}:${r.state}:${r.attempts}`)).toEqual(["0:done:1", "1:running:1", "2:done:1"]);
    expect((await meta<MapJobSpec>(stub, "spec"))?.call.model).toBe("openai-compatible/other");
    expect(await meta(stub, "counters")).toMatchObject({ completed: 2, failed: 1, succeeded: 1 });
  });
});

describe("coordinator: a recover onto another model", () => {
  it("paces it under its own provider's credential, not the old model's", async () => {
    const { stub } = await startJob(mapSpec(), ["a"]);
    await tick(stub);
    await report(stub, "items", 0, failed());
    const before = await meta<string>(stub, "credential");
    expect(before).toBeTruthy();
    expect(await stub.recover({ ...NO_RECOVER, model: "anthropic/claude-sonnet-4-6" })).toEqual({ ok: true, recovering: 1 });
    const after = await meta<string>(stub, "credential");
    expect(after).toBeTruthy();
    expect(after).not.toBe(before); // the code before kept the openai-compatible key's
    await endJob(stub); // its recovered task would run on after the file's runtime is gone
  });
});

describe("coordinator: the final flush", () => {
  it("emits MAP_COMPLETED only once D1 has every result; a failed flush is retried by the alarm", async () => {
    const { stub, jobId } = await startJob(mapSpec(), ["a"], false); // no job row yet: D1's foreign key refuses the results
    await tick(stub);
    // The refused flush is logged: expected here, so it is checked rather than printed as if something broke.
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    await report(stub, "items", 0, ok("x"));
    expect(logged.mock.calls.some(([message, err]) => message === "final flush failed; the alarm retries" && String(err).includes("FOREIGN KEY"))).toBe(true);
    logged.mockRestore();
    expect(await meta(stub, "status")).toBe("completed");
    expect(await meta(stub, "finalized")).toBeFalsy();
    expect((await events(stub)).map((e) => e.name)).toEqual(["MAP_STARTED", "MAP_ITEM_COMPLETED"]);
    const spec = await meta<MapJobSpec>(stub, "spec");
    await insertJobRow(jobId, spec?.tenantId ?? "", "map");
    // The retry is due in a second: the runtime may be running it already, and then there is none to run.
    await runDurableObjectAlarm(stub);
    await vi.waitFor(async () => expect((await events(stub)).map((e) => e.name)).toEqual(["MAP_STARTED", "MAP_ITEM_COMPLETED", "MAP_COMPLETED"]), {
      timeout: 5_000,
    });
    const row = await env.DB.prepare("SELECT status, completed FROM jobs WHERE id = ?").bind(jobId).first();
    expect(row).toMatchObject({ status: "completed", completed: 1 });
  });
});
