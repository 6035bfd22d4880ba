/**
 * Execution mode auto's ladder (durable-objects/coordinator/batch-deadlines.ts), its planned times
 * on a host of plain values: batch until the time left is what the unfinished items need on the
 * next rung (flex where every model has it and its items have time there, else standard) plus the
 * cancel's grace; on flex, standard once the time left is what that tier needs.
 */
import { describe, expect, it } from "vitest";
import { BatchDeadlines } from "../../../durable-objects/coordinator/batch-deadlines";
import type { BatchHost } from "../../../durable-objects/coordinator/batch-runner";

function deadlines(model: string, deadlineSecs: number, timeoutMs: number, unfinished = 3) {
  const ladder = { realtime: new Set<string>(), flex: new Set<string>() };
  const meta = new Map<string, unknown>();
  const host = {
    spec: () => ({ model, fallbacks: [], concurrency: 16, execution: { mode: "auto", deadlineSecs } }),
    startedAt: () => 0,
    ladder,
    store: {
      stage: () => ({ total: unfinished, completed: 0 }),
      transaction: (f: () => void) => f(),
      setMeta: (key: string, value: unknown) => meta.set(key, value),
    },
  } as unknown as BatchHost;
  const runner = { stages: () => (ladder.realtime.has("items") ? [] : ["items"]), cancelOpen: async () => {}, timeoutOf: () => timeoutMs };
  return { d: new BatchDeadlines(host, runner), ladder, meta };
}

describe("auto's ladder", () => {
  it("plans the move to flex where every model has it: three standard calls' time a call, before the cancel's grace", async () => {
    const { d, ladder, meta } = deadlines("openai/gpt-6-luna", 8, 1_000);
    expect(d.fallbackAt()).toBe(8_000 - 3 * 1_000 - 2_000); // three items at concurrency 16: one round of flex calls
    await d.fallBack(3_000);
    expect([...ladder.realtime]).toEqual(["items"]);
    expect([...ladder.flex]).toEqual(["items"]);
    expect(meta.get("flex_stages")).toEqual(["items"]);
    expect(d.standardAt()).toBe(8_000 - 1_000); // then standard, once the time left is one standard call's
    d.toStandard();
    expect([...ladder.flex]).toEqual([]);
    expect(d.standardAt()).toBeNull();
  });

  it("goes straight to standard where a model has no flex tier, or where flex would not leave its items time", async () => {
    expect(deadlines("anthropic/claude-haiku-4-5", 8, 1_000).d.fallbackAt()).toBe(8_000 - 1_000 - 2_000);
    const tight = deadlines("openai/gpt-6-luna", 6, 4_000); // flex needs 12 s of a 6 s deadline
    expect(tight.d.fallbackAt()).toBe(6_000 - 4_000 - 1_500);
    await tight.d.fallBack(500);
    expect([...tight.ladder.realtime]).toEqual(["items"]);
    expect([...tight.ladder.flex]).toEqual([]);
  });
});
