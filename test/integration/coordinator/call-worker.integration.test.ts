/**
 * A call worker's loop against a real coordinator: its outcome is reported again after a report
 * that failed, without a second attempt; a pulled task whose answer was lost is handed again; and
 * a task begun on it meanwhile wins over the one a report's answer hands it. The worker's
 * coordinator binding forwards every call to the real coordinator, and lets the test act at the
 * moment of a claim, a report or its answer.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { CallWorker } from "../../../durable-objects/call-worker";
import type { PulledTask, StageSetup, TaskClaim, TaskRef } from "../../../src/engine/types";
import { callWorker } from "../../../src/objects";
import { base, call, meta, ok, startJob, tasks, tick } from "./drive";
import type { Counters } from "../../../src/engine/counters";

type Coordinator = ReturnType<typeof env.JOB_COORDINATOR.get>;
type Hooks = { claim?: () => void; report?: () => Promise<void> | void; answered?: () => void };

/**
 * The stage's setup with no model endpoint: the test's worker's attempt fails at once, a real
 * outcome with no network. (The job's endpoint never answers, so the real workers the job
 * dispatched to before the takeover never report: test/integration/model-tarpit.ts.)
 */
function withoutEndpoint(setup: StageSetup): StageSetup {
  return { ...setup, endpoint: { apiKey: null, baseUrl: null, policy: false } };
}

/** Puts `forwarding(hooks)` in the worker's env. */
function forward(worker: CallWorker, hooks: Hooks): void {
  (worker as unknown as { env: Env }).env = forwarding(hooks);
}

/** The worker's env, with a coordinator binding that forwards to the real one after the test's hooks. */
function forwarding(hooks: Hooks): Env {
  const real = env.JOB_COORDINATOR;
  const get = (id: DurableObjectId) => {
    const stub: Coordinator = real.get(id);
    return {
      claim: async (...args: Parameters<Coordinator["claim"]>) => {
        hooks.claim?.();
        const claim = (await stub.claim(...args)) as TaskClaim | null;
        if (claim?.setup) claim.setup = withoutEndpoint(claim.setup);
        return claim;
      },
      work: (stage: string) => stub.work(stage),
      report: async (...args: Parameters<Coordinator["report"]>) => {
        await hooks.report?.();
        const answer = (await stub.report(...args)) as PulledTask | null;
        hooks.answered?.(); // throwing here: the report landed, its answer is lost
        if (answer?.setup) answer.setup = withoutEndpoint(answer.setup);
        return answer;
      },
    };
  };
  // Without the job's endpoint here too, for a stage whose work is fetched without a setup.
  return { ...env, OPENAI_COMPATIBLE_BASE_URL: undefined, JOB_COORDINATOR: { idFromName: (name: string) => real.idFromName(name), get } } as unknown as Env;
}

/** A map job of `items` at concurrency 1 whose first task the test dispatches to a worker of its own (token `test-items-0`). */
async function jobWithTaskInWorker(items: string[], name: string, maxRetries = 0) {
  const job = await startJob((jobId, tenantId) => ({ ...base(jobId, tenantId), concurrency: 1, maxRetries, type: "map", call: call() }), items);
  await tick(job.stub);
  const ref: TaskRef = { jobId: job.jobId, stage: "items", index: 0, attempt: 1, token: "test-items-0", slot: 0, sessionId: null, round: 1 };
  const worker = callWorker(env, `${name}-${job.jobId}`) as DurableObjectStub<CallWorker>;
  await runInDurableObject(worker, (_i, state) => state.storage.put({ task: ref, outcome: null }));
  return { job, worker };
}

const states = async (job: { stub: Parameters<typeof tasks>[0] }) => (await tasks(job.stub)).map((r) => [r.idx, r.state, r.attempts]);

describe("call worker", () => {
  it("reports its stored outcome again after a failed report, without running the attempt again", async () => {
    // The attempt fails at once (its setup has no endpoint): a real outcome, no network.
    const { job, worker } = await jobWithTaskInWorker(["x"], "retry");
    const calls = { claim: 0, report: 0 };
    await runInDurableObject(worker, async (instance) => {
      forward(instance, {
        claim: () => calls.claim++,
        report: () => {
          if (++calls.report === 1) throw new Error("the coordinator could not be reached");
        },
      });
      await expect(instance.alarm()).rejects.toThrow("the coordinator could not be reached");
      await instance.alarm(); // the platform runs a failed alarm again
    });
    expect(calls).toEqual({ claim: 1, report: 2 });
    expect(await states(job)).toEqual([[0, "done", 1]]);
  });

  it("does no work for a stale dispatch: the claim is refused, nothing runs or is reported", async () => {
    const { job, worker } = await jobWithTaskInWorker(["x"], "stale");
    await job.stub.cancel(); // the dispatch goes stale: the job's running tasks are released
    const calls = { claim: 0, report: 0 };
    await runInDurableObject(worker, async (instance) => {
      forward(instance, { claim: () => calls.claim++, report: () => void calls.report++ });
      await instance.alarm();
    });
    expect(calls).toEqual({ claim: 1, report: 0 });
    expect(await states(job)).toEqual([[0, "pending", 1]]);
  });

  it("does not store a pulled task over a task begun meanwhile (the worker lent to the next job), nor run it", async () => {
    // Job A stands for a job that ended after it answered W's report with its next item.
    const { job, worker } = await jobWithTaskInWorker(["x", "y", "z"], "race");
    const next: TaskRef = { jobId: "job_next_b", stage: "items", index: 0, attempt: 1, token: "tok-b", slot: 0, sessionId: null, round: 1 };
    await runInDurableObject(worker, async (instance) => {
      forward(instance, { report: () => instance.begin(next) });
      await instance.alarm();
    });
    expect(await runInDurableObject(worker, (_i, state) => state.storage.get("task"))).toMatchObject({ token: "tok-b" });
    expect(await states(job)).toEqual([
      [0, "done", 1],
      [1, "running", 1],
      [2, "pending", 0],
    ]); // item 1 was handed out, not run
  });

  it("gets its pulled task again when the answer that handed it over was lost, and runs it", async () => {
    const { job, worker } = await jobWithTaskInWorker(["x", "y"], "lost-answer");
    const calls = { claim: 0, report: 0 };
    await runInDurableObject(worker, async (instance) => {
      forward(instance, {
        claim: () => calls.claim++,
        answered: () => {
          if (++calls.report === 1) throw new Error("the connection dropped before the answer came");
        },
      });
      await expect(instance.alarm()).rejects.toThrow("the connection dropped");
    });
    // Item 1 was handed to slot 0 in the lost answer: nothing else would run it before the sweep.
    expect(await states(job)).toEqual([
      [0, "done", 1],
      [1, "running", 1],
    ]);
    await runInDurableObject(worker, (instance) => instance.alarm()); // the platform runs a failed alarm again: item 0's report, repeated
    expect(calls).toEqual({ claim: 1, report: 3 }); // item 0, item 0 again (answered with item 1), item 1
    expect(await states(job)).toEqual([
      [0, "done", 1],
      [1, "done", 1],
    ]);
  });

  it("keeps a task begun during its attempt as the stored one (the attempt's outcome does not write over it)", async () => {
    const { job, worker } = await jobWithTaskInWorker(["x", "y"], "begun-mid-call");
    const next: TaskRef = { jobId: "job_next_c", stage: "items", index: 0, attempt: 1, token: "tok-c", slot: 0, sessionId: null, round: 1 };
    await runInDurableObject(worker, async (instance) => {
      forward(instance, { claim: () => void instance.begin(next) });
      await instance.alarm();
    });
    expect(await runInDurableObject(worker, (_i, state) => state.storage.get("task"))).toMatchObject({ token: "tok-c" });
    expect(await states(job)).toEqual([
      [0, "done", 1],
      [1, "running", 1],
    ]); // item 0 reported; item 1 handed out, not run
  });

  it("counts a call re-sent after a restart: the claim repeated by a worker with no memory of it is one more attempt, and an interrupted call in the job's usage", async () => {
    const { job, worker } = await jobWithTaskInWorker(["x"], "restarted", 2);
    // The worker's life before the restart claimed the task and was under way when it died.
    expect(await job.stub.claim("items", 0, "test-items-0")).not.toBeNull();
    await runInDurableObject(worker, async (instance) => {
      forward(instance, {});
      await instance.alarm(); // after the restart: the stored task, no outcome, claimed again
    });
    const [row] = await tasks(job.stub);
    expect(row).toMatchObject({ state: "done", attempts: 2 }); // the re-sent call failed at once (no endpoint): permanent
    const counters = (await meta<Counters>(job.stub, "counters")) as Counters;
    expect(counters).toMatchObject({ total_attempts: 2, interrupted_calls: 1 });
  });

  it("ends a task whose call is re-sent past its attempts, and counts the interrupted call's prompt from the re-sent call's report", async () => {
    const { job } = await jobWithTaskInWorker(["x"], "out-of-attempts", 1);
    expect(await job.stub.claim("items", 0, "test-items-0")).not.toBeNull();
    expect(await job.stub.claim("items", 0, "test-items-0")).not.toBeNull(); // re-sent: attempt 2 of 2
    await job.stub.report({ stage: "items", index: 0, token: "test-items-0" }, ok("fine"));
    expect((await tasks(job.stub))[0]).toMatchObject({ state: "done", attempts: 2 });
    expect(await meta<Counters>(job.stub, "counters")).toMatchObject({ interrupted_calls: 1, interrupted_input_tokens: 3, input_tokens: 3 });
    // A task at its last attempt whose call is cut short again ends: nothing more is sent.
    const second = await jobWithTaskInWorker(["y"], "last-attempt", 0);
    expect(await second.job.stub.claim("items", 0, "test-items-0")).not.toBeNull();
    expect(await second.job.stub.claim("items", 0, "test-items-0")).toBeNull();
    expect((await tasks(second.job.stub))[0]).toMatchObject({ state: "done", attempts: 1 });
    const [result] = await runInDurableObject(second.job.stub, (_i, state) =>
      state.storage.sql.exec<{ error_kind: string; error: string }>("SELECT error_kind, error FROM tasks").toArray(),
    );
    expect(result).toMatchObject({ error_kind: "internal" });
    expect(result?.error).toContain("restarted while its call was under way");
  });

  it("counts a pulled task handed again to a worker that restarted (its report repeated with no memory of an unanswered one)", async () => {
    const { job } = await jobWithTaskInWorker(["x", "y"], "pulled-restart", 1);
    const pull = { have: [], slot: 0, round: 1 };
    const next = (await job.stub.report({ stage: "items", index: 0, token: "test-items-0" }, ok("a"), pull)) as PulledTask | null;
    expect(next?.ref.index).toBe(1);
    // The worker restarted during item 1's call: it reports item 0 again, and gets item 1 again, counted.
    const again = (await job.stub.report({ stage: "items", index: 0, token: "test-items-0" }, ok("a"), pull)) as PulledTask | null;
    expect(again?.ref).toMatchObject({ index: 1, token: next?.ref.token, attempt: 2 });
    expect((await tasks(job.stub))[1]).toMatchObject({ state: "running", attempts: 2 });
    expect(await meta<Counters>(job.stub, "counters")).toMatchObject({ interrupted_calls: 1 });
    // Said unanswered (the answer was lost, the worker did not restart): handed again, not counted.
    await job.stub.report({ stage: "items", index: 0, token: "test-items-0" }, ok("a"), { ...pull, unanswered: true });
    expect((await tasks(job.stub))[1]).toMatchObject({ state: "running", attempts: 2 });
  });
});
