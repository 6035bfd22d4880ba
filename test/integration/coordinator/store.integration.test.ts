/** The coordinator's store, on a coordinator object's own SQLite storage: making tasks ready, and a stage's extent. */
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
});
