/** Adaptive concurrency's policy on its own: cut on a throttle (once per window), grow by successes, lift at the ceiling, split among jobs. */
import { describe, expect, it } from "vitest";
import { cut, grow, OPEN, PROBE_ROUNDS, share } from "../../src/engine/aimd";

describe("AIMD for a tenant's model", () => {
  it("cuts to 0.8 of the calls in flight, once per window, and never above what got through in the window", () => {
    const first = cut(OPEN, 64, 10_000, 9_000);
    expect(first).toEqual({ limit: 51, credit: 0, cutAt: 10_000, sent: 64, throttled: 1 });
    // The window's other throttles (sent before the cut): no new cut, but the limit follows what got through.
    let state = first;
    for (let i = 0; i < 10; i++) state = cut(state, 40, 10_050, 9_500);
    expect(state).toMatchObject({ limit: 51, throttled: 11 }); // 64 − 11 = 53 got through so far: 51 stands
    for (let i = 0; i < 45; i++) state = cut(state, 40, 10_060, 9_500);
    expect(state).toMatchObject({ limit: 8, throttled: 56 }); // 64 sent, 56 throttled: room for 8
    const next = cut(state, 9, 10_400, 10_200); // sent under the new limit, and still throttled: a new window
    expect(next).toMatchObject({ limit: 6, sent: 8, throttled: 1, cutAt: 10_400 }); // 0.8 of the 8 the limit let out
    expect(cut({ limit: 20, credit: 5, cutAt: 0 }, 6, 5_000, 4_000).limit).toBe(4); // fewer in flight than the limit: of those
    expect(cut({ limit: 1, credit: 0, cutAt: 0 }, 1, 5_000, 4_000).limit).toBe(1); // never below one
    expect(cut(OPEN, 0, 5_000, 4_000).limit).toBe(1);
  });

  it("grows by one per `limit` successes, and lifts the limit at the jobs' own concurrency", () => {
    const state = { limit: 4, credit: 0, cutAt: 1 };
    expect(grow(state, 3, 64)).toEqual({ limit: 4, credit: 3, cutAt: 1 });
    expect(grow(state, 4, 64)).toEqual({ limit: 5, credit: 0, cutAt: 1 });
    expect(grow(state, 4 + 5 + 2, 64)).toEqual({ limit: 6, credit: 2, cutAt: 1 });
    expect(grow({ limit: 4, credit: 0, cutAt: 1, sent: 9, throttled: 3 }, 4, 64)).toEqual({ limit: 5, credit: 0, cutAt: 1, sent: 9, throttled: 3 });
    // At the room last seen (9 sent when throttled: 8 got through), it probes for more once per PROBE_ROUNDS rounds.
    const atKnee = { limit: 8, credit: 0, cutAt: 1, sent: 9, throttled: 1 };
    expect(grow(atKnee, 8 * PROBE_ROUNDS - 1, 64).limit).toBe(8);
    expect(grow(atKnee, 8 * PROBE_ROUNDS, 64).limit).toBe(9);
    expect(grow({ limit: 63, credit: 62, cutAt: 1 }, 1, 64)).toEqual(OPEN);
    expect(grow(OPEN, 100, 64)).toBe(OPEN);
  });

  it("splits a limit equally among the jobs, at least one call each and never more than a job asked", () => {
    expect(share(OPEN, 3, 50)).toBe(50);
    expect(share({ limit: 8, credit: 0, cutAt: 0 }, 1, 64)).toBe(8);
    expect(share({ limit: 8, credit: 0, cutAt: 0 }, 2, 64)).toBe(4);
    expect(share({ limit: 8, credit: 0, cutAt: 0 }, 3, 64)).toBe(2);
    expect(share({ limit: 2, credit: 0, cutAt: 0 }, 5, 64)).toBe(1);
    expect(share({ limit: 8, credit: 0, cutAt: 0 }, 1, 3)).toBe(3);
  });
});
