/** Adaptive concurrency's policy on its own: cut on a throttle (once per window), grow by successes, lift at the ceiling, split among jobs, pace a first round. */
import { describe, expect, it } from "vitest";
import { cut, grow, INITIAL_WINDOW, OPEN, paced, PROBE_ROUNDS, RAMP_MS, ramped, shareOf, succeeded, tenantPart, type Aimd } from "../../src/engine/aimd";

describe("AIMD for a tenant's model", () => {
  it("cuts to 0.8 of the calls in flight, once per window, and never above what got through in the window", () => {
    const first = cut(OPEN, 64, 10_000, 9_000);
    expect(first).toMatchObject({ limit: 51, credit: 0, cutAt: 10_000, sent: 64, throttled: 1, held: true, before: null });
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
    // Inside a window the successes are counted too (the window's throttled share).
    expect(grow({ limit: 4, credit: 0, cutAt: 1, sent: 9, throttled: 3 }, 4, 64)).toEqual({ limit: 5, credit: 0, cutAt: 1, sent: 9, throttled: 3, ok: 4 });
    // At the room last seen (9 sent when throttled: 8 got through), it probes for more once per PROBE_ROUNDS rounds.
    const atKnee = { limit: 8, credit: 0, cutAt: 1, sent: 9, throttled: 1 };
    expect(grow(atKnee, 8 * PROBE_ROUNDS - 1, 64).limit).toBe(8);
    expect(grow(atKnee, 8 * PROBE_ROUNDS, 64).limit).toBe(9);
    // Past it (the probe went through: more room than last seen), one per success: a round doubles it.
    expect(grow({ ...atKnee, limit: 9 }, 9, 64).limit).toBe(18);
    expect(grow({ ...atKnee, limit: 9 }, 9 + 18 + 36, 64)).toEqual(OPEN); // at the ceiling: lifted
    expect(grow({ limit: 63, credit: 62, cutAt: 1 }, 1, 64)).toEqual(OPEN);
    expect(grow(OPEN, 100, 64)).toBe(OPEN);
  });

  it("splits a limit equally among the jobs, at least one call each and never more than a job asked", () => {
    expect(shareOf(OPEN, 1 / 3, 50)).toBe(50);
    expect(shareOf({ limit: 8, credit: 0, cutAt: 0 }, 1, 64)).toBe(8);
    expect(shareOf({ limit: 8, credit: 0, cutAt: 0 }, 1 / 2, 64)).toBe(4);
    expect(shareOf({ limit: 8, credit: 0, cutAt: 0 }, 1 / 3, 64)).toBe(2);
    expect(shareOf({ limit: 2, credit: 0, cutAt: 0 }, 1 / 5, 64)).toBe(1);
    expect(shareOf({ limit: 8, credit: 0, cutAt: 0 }, 1, 3)).toBe(3);
  });

  it("splits it per tenant first, then per job of a tenant", () => {
    const active = [{ tenant: "a" }, { tenant: "a" }, { tenant: "b" }];
    expect(tenantPart(active, "b")).toBe(1 / 2);
    expect(tenantPart(active, "a")).toBe(1 / 4);
    expect(shareOf({ limit: 8, credit: 0, cutAt: 0 }, tenantPart(active, "b"), 64)).toBe(4);
    expect(shareOf({ limit: 8, credit: 0, cutAt: 0 }, tenantPart(active, "a"), 64)).toBe(2);
    expect(shareOf({ limit: 9, credit: 0, cutAt: 0 }, 1 / 3, 64)).toBe(3); // no float below a whole share
    expect(shareOf(OPEN, 1 / 4, 50)).toBe(50);
  });

  it("undoes cuts that leave the throttled share where it was, and then tolerates that share", () => {
    // A provider that answers 10 % of calls 429 at any concurrency (C = 25): 10 throttles per 100 calls, whatever the limit.
    const window = (state: Aimd, at: number): Aimd => {
      let s = cut(state, state.limit ?? 25, at, at - 1); // a call sent after the last window opened: a new one
      s = cut(s, s.limit ?? 25, at + 1, at - 1); // another call of the same window
      return succeeded(s, 18); // the window's other calls succeeded
    };
    const w1 = window(OPEN, 1_000);
    expect(w1).toMatchObject({ limit: 20, held: true, before: null }); // the first window cuts as ever: nothing is known yet
    const w2 = window(w1, 2_000);
    expect(w2).toMatchObject({ limit: 16, held: true, before: null, lastShare: 0.1 });
    // Its share (2 of 20) is the share before the cut: the cuts undo, and 10 % is tolerated.
    const w3 = cut(w2, 16, 3_000, 2_999);
    expect(w3).toMatchObject({ limit: null, held: false, tolerate: 0.1 });
    expect(shareOf(w3, 1, 25)).toBe(25);
    // Later windows at that share cut nothing...
    let later = w3;
    for (let at = 4_000; at < 10_000; at += 1_000) later = window(later, at);
    expect(later).toMatchObject({ limit: null, held: false });
    // ...but a burst over the room (6 of 25 throttled: over twice 10 %) still cuts, and the limit follows what got through.
    let burst = cut(later, 25, 20_000, 19_999);
    for (let i = 0; i < 5; i++) burst = cut(burst, 25, 20_010, 19_990);
    expect(burst).toMatchObject({ limit: 19, held: true, throttled: 6 });
    burst = cut(burst, 25, 20_020, 19_990);
    expect(burst.limit).toBe(18); // 25 − 7 got through
  });

  it("keeps cutting when a cut lowers the throttled share (a provider at capacity)", () => {
    // 64 sent, 56 throttled: room for 8. Then a probe to 9 is throttled once in ~70 calls: the cut helped; it cuts again.
    let state = cut(OPEN, 64, 10_000, 9_000);
    for (let i = 0; i < 55; i++) state = cut(state, 40, 10_010, 9_500);
    state = succeeded(state, 70);
    state = cut(state, 9, 20_000, 19_000);
    expect(state).toMatchObject({ limit: 6, held: true }); // 0.8 of the 8 let out
    expect(state.tolerate).toBeUndefined();
    state = succeeded(state, 70);
    state = cut(state, 9, 30_000, 29_000); // the same small share again (1 in 71): under SPORADIC_SHARE, not sporadic
    expect(state).toMatchObject({ limit: 4, held: true });
    expect(state.tolerate).toBeUndefined();
  });

  it("paces a first round at INITIAL_WINDOW and lifts it RAMP_MS later unless a throttle came", () => {
    expect(INITIAL_WINDOW).toBe(16);
    expect(paced(OPEN, 16, 1_000)).toEqual(OPEN); // a job that asks for no more: nothing to pace
    const start = paced(OPEN, 64, 1_000);
    expect(start).toEqual({ limit: 16, credit: 0, cutAt: 1_000, rampUntil: 1_000 + RAMP_MS });
    expect(shareOf(start, 1, 64)).toBe(16);
    expect(paced({ limit: 8, credit: 0, cutAt: 5 }, 64, 1_000)).toEqual({ limit: 8, credit: 0, cutAt: 5 }); // a limit holds: it stays
    expect(ramped(start, 1_000 + RAMP_MS - 1)).toBe(start); // not yet
    expect(ramped(start, 1_000 + RAMP_MS)).toEqual(OPEN); // no throttle came: lifted
    expect(ramped({ ...start, tolerate: 0.1 }, 2_000)).toEqual({ ...OPEN, tolerate: 0.1 });
    // Successes during the pacing grow it as ever; the pacing still ends on time.
    const grown = grow(start, 16, 64);
    expect(grown).toMatchObject({ limit: 17, rampUntil: 1_000 + RAMP_MS });
    expect(ramped(grown, 1_000 + RAMP_MS)).toEqual(OPEN);
  });

  it("ends the pacing with the window of a throttle: a provider with room for 8 throttles 8 calls, not the job's whole first round", () => {
    let state = paced(OPEN, 64, 1_000);
    state = cut(state, 16, 1_010, 1_000); // the first of the round's throttles
    expect(state).toMatchObject({ limit: 12, sent: 16, throttled: 1 });
    expect(state.rampUntil).toBeUndefined();
    for (let i = 0; i < 7; i++) state = cut(state, 16, 1_015, 1_000); // the rest of the round's 8 throttles
    expect(state).toMatchObject({ limit: 8, throttled: 8 });
    expect(ramped(state, 5_000)).toBe(state); // a window holds: no lift by time
  });
});
