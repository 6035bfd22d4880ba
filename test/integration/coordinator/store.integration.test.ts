/** The coordinator's store, on a coordinator object's own SQLite storage: a plan's tasks inserted, making tasks ready, and a stage's extent. */
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { JobCoordinator } from "../../../durable-objects/job-coordinator";
import { CoordinatorStore } from "../../../durable-objects/coordinator/store";

const freshObject = () => env.JOB_COORDINATOR.get(env.JOB_COORDINATOR.idFromName(`job_store_${crypto.randomUUID()}`)) as DurableObjectStub<JobCoordinator>;

describe("coordinator store", () => {
  it("makes a task ready once: inserted ready or blocked, a blocked one released with its input, never twice", async () => {
    const out = await runInDurableObject(freshObject(), (_i, state) => {
      const store = new CoordinatorStore(state.storage);
      const steps = [
        store.makeReady({ stage: "s", index: 0, input: "a" }), // new: ready
        store.makeReady({ stage: "s", index: 0, input: "changed" }), // ready already: nothing changes
        store.makeReady({ stage: "s", index: 1, input: null, blocked: true }), // new: blocked
        store.makeReady({ stage: "s", index: 1, input: "late", blocked: true }), // blocked again: nothing changes
        store.makeReady({ stage: "s", index: 1, input: "b" }), // released with its input
        store.makeReady({ stage: "s", index: 1, input: "again" }), // left blocked already
      ];
      const rows = [0, 1].map((i) => store.task("s", i)).map((t) => [t?.state, t?.input]);
      store.makeReady({ stage: "s", index: 7, input: "far" });
      return { steps, rows, extent: store.extent("s"), none: store.extent("other") };
    });
    expect(out.steps).toEqual([true, false, false, false, true, false]);
    expect(out.rows).toEqual([["pending", '"a"'], ["pending", '"b"']]);
    expect(out.extent).toBe(8); // one past the highest index
    expect(out.none).toBe(0);
  });

  it("stores a plan's tasks as a task made ready one by one would be, inputs byte for byte, in chunks of rows and a huge row alone", async () => {
    const tricky: unknown[] = [
      'quote " backslash \\ slash / tab \t newline \n nul \u0000',
      "lone \ud800 surrogate, pair 😀, é, \u2028",
      1.2345678901234567,
      -0,
      1e21,
      2 ** 70,
      null,
      { nested: [1, "two", { three: true }], empty: {} },
      [],
      "x".repeat(300_000), // past one chunk's size with its neighbours
      "y".repeat(300_000),
      '"'.repeat(300_000), // escaped twice inside the array: a row too large for any chunk, inserted alone
      "z",
    ];
    const out = await runInDurableObject(freshObject(), (_i, state) => {
      const store = new CoordinatorStore(state.storage);
      store.insertTasks(tricky.map((input, index) => ({ stage: "plan", index, input, priority: index % 3, blocked: index === 4, sessionId: index === 5 ? "ses_1" : null })));
      for (const [index, input] of tricky.entries()) store.makeReady({ stage: "one", index, input, priority: index % 3, blocked: index === 4, sessionId: index === 5 ? "ses_1" : null });
      const pick = (stage: string) =>
        tricky.map((_, i) => store.task(stage, i)).map((t) => t && [t.idx, t.input, t.state, t.priority, t.session_id]);
      return { plan: pick("plan"), one: pick("one"), extent: store.extent("plan") };
    });
    expect(out.plan).toEqual(out.one);
    expect(out.extent).toBe(tricky.length);
    expect(out.plan.map((row) => JSON.parse((row as [number, string])[1]))).toEqual(tricky.map((v) => JSON.parse(JSON.stringify(v))));
    expect(out.plan[4]?.[2]).toBe("blocked");
    expect(out.plan[5]?.[4]).toBe("ses_1");
  });
});
