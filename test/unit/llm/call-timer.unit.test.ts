/**
 * One timer for a loop's calls (src/llm/call-timer.ts): each call aborted at its own deadline,
 * none early, overlapping calls each on time, an ended call never, the timer set about once per timeout however many
 * calls, and nothing left behind when the loop ends. Fake clocks: no test waits on the wall.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { callTimeout, withCallTimer } from "../../../src/llm/call-timer";

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(0);
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe("one timer for a loop's calls", () => {
  it("aborts each call at its own deadline, never early, with calls that overlap and calls of other timeouts", async () => {
    await withCallTimer(async () => {
      const a = callTimeout(1_000);
      vi.advanceTimersByTime(400);
      const b = callTimeout(1_000); // deadline 1,400
      const c = callTimeout(100); // deadline 500: earlier than the timer set for a
      vi.advanceTimersByTime(99);
      expect([a, b, c].map((t) => t.signal.aborted)).toEqual([false, false, false]);
      vi.advanceTimersByTime(1);
      expect([a, b, c].map((t) => t.signal.aborted)).toEqual([false, false, true]);
      vi.advanceTimersByTime(499); // 999
      expect(a.signal.aborted).toBe(false);
      vi.advanceTimersByTime(1); // 1,000
      expect([a.signal.aborted, b.signal.aborted]).toEqual([true, false]);
      vi.advanceTimersByTime(399);
      expect(b.signal.aborted).toBe(false);
      vi.advanceTimersByTime(1);
      expect(b.signal.aborted).toBe(true);
    });
  });

  it("does not abort a call that ended, and sets the timer about once per timeout however many calls run", async () => {
    const set = vi.spyOn(globalThis, "setTimeout");
    const ended: ReturnType<typeof callTimeout>[] = [];
    await withCallTimer(async () => {
      for (let i = 0; i < 1_000; i++) {
        const t = callTimeout(60_000);
        vi.advanceTimersByTime(200); // a call of 200 ms, answered in time
        t.release();
        ended.push(t);
      }
      vi.advanceTimersByTime(120_000); // long past every deadline
    });
    expect(ended.filter((t) => t.signal.aborted)).toEqual([]);
    // 200 s of calls with a 60 s timeout: the timer fires every ~60 s and is set again; not 1,000 times.
    expect(set.mock.calls.length).toBeGreaterThan(0);
    expect(set.mock.calls.length).toBeLessThanOrEqual(5);
  });

  it("leaves no timer behind when the loop ends, even with a call still under way", async () => {
    let open: ReturnType<typeof callTimeout> | null = null;
    await withCallTimer(async () => {
      open = callTimeout(5_000);
    });
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(10_000);
    expect(open!.signal.aborted).toBe(false); // the loop that owned it is over: nothing fires
  });

  it("outside a loop, gives each call a timer of its own, cleared at its release", () => {
    const t = callTimeout(300);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(300);
    expect(t.signal.aborted).toBe(true);
    const u = callTimeout(300);
    u.release();
    expect(vi.getTimerCount()).toBe(0);
  });
});
