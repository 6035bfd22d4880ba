import { describe, expect, it } from "vitest";
import { seeded } from "./seeded";
import { bounded, declare, EMPTY, lease, MAX_SHARED_BLOCK_MS, limitsOf, observe, paces, settle, type CallCost, type PacerState } from "../../src/engine/pacing";

const COST: CallCost = { tokens: 500, input: 400, output: 100 };
const ask = (jobId: string, calls: number, tenant = "t1", cost = COST) => ({ jobId, tenant, calls, cost });

/** Leases `jobs` ask for over `ms` (each asks again when its wait ends); the calls each got. */
function run(start: PacerState, jobs: { id: string; tenant: string; calls?: number }[], ms: number, cost = COST): Record<string, number> {
  let state = start;
  const got: Record<string, number> = Object.fromEntries(jobs.map((j) => [j.id, 0]));
  const next: Record<string, number> = Object.fromEntries(jobs.map((j) => [j.id, 0]));
  // From one ask to the next: the clock jumps to the earliest job due (the jobs due together ask in their order).
  for (let now = 0; now < ms; now = Math.min(...Object.values(next))) {
    for (const j of jobs) {
      if ((next[j.id] as number) > now) continue;
      const r = lease(state, ask(j.id, j.calls ?? 50, j.tenant, cost), now);
      state = r.state;
      got[j.id] = (got[j.id] as number) + r.lease.granted;
      next[j.id] = now + (r.lease.granted < (j.calls ?? 50) ? r.lease.waitMs : 1);
    }
  }
  return got;
}

describe("pacing by rate limits", () => {
  it("paces nothing until a limit is known", () => {
    expect(paces(EMPTY)).toBe(false);
    expect(lease(EMPTY, ask("j", 40), 0).lease).toMatchObject({ granted: 40, waitMs: 0 });
  });

  it("spreads a declared RPM evenly: half a second's worth at once, then the rate, a little under it", () => {
    const state = declare(EMPTY, { rpm: 600, tpm: null }, 0);
    expect(limitsOf(state)).toEqual({ rpm: 600, tpm: null });
    const first = lease(state, ask("j", 50), 0);
    expect(first.lease.granted).toBe(5); // a bucket of half a second (5 of 600 a minute), nothing ahead of it
    expect(first.lease.waitMs).toBeGreaterThan(0);
    expect(first.lease.waitMs).toBeLessThanOrEqual(Math.ceil(200 / 0.97)); // back when a lease's worth (2 calls) will fit
    // Over a minute the job gets 97 % of the limit (and the first half second's bucket), not more.
    const got = run(state, [{ id: "j", tenant: "t" }], 60_000);
    expect(got.j).toBeGreaterThanOrEqual(0.97 * 600);
    expect(got.j).toBeLessThanOrEqual(0.97 * 600 + 5 + 2);
  });

  it("counts tokens as OpenAI does (prompt + max_tokens) when the token limit binds", () => {
    const state = declare(EMPTY, { rpm: 10_000, tpm: 60_000 }, 0); // 1,000 tokens a second: two calls of 500
    expect(run(state, [{ id: "j", tenant: "t" }], 10_000).j).toBeLessThanOrEqual(2 * 10 + 1);
    expect(run(state, [{ id: "j", tenant: "t" }], 10_000).j).toBeGreaterThanOrEqual(0.97 * 2 * 10);
  });

  it("lets a call larger than the bucket go out on a full one", () => {
    const state = declare(EMPTY, { rpm: 600, tpm: 6_000 }, 0); // 100 tokens a second, calls of 500
    const first = lease(state, ask("j", 5), 2_000); // the bucket full
    expect(first.lease.granted).toBe(1);
    const second = lease(first.state, ask("j", 5), 2_001);
    expect(second.lease.granted).toBe(0);
    expect(second.lease.waitMs).toBeGreaterThan(4_000); // the debt of 400 repaid, then the bucket full again
  });

  it("learns the limits from OpenAI's headers and lets `remaining` lower its view", () => {
    const seen = observe(EMPTY, { requests: { limit: 1_200, remaining: 3 }, tokens: { limit: 1_000_000, remaining: 900_000 } }, 0);
    expect(seen.source).toBe("headers");
    expect(limitsOf(seen)).toEqual({ rpm: 1_200, tpm: 1_000_000 });
    expect(lease(seen, ask("j", 50), 0).lease.granted).toBe(3); // the provider says 3 are left, not 10 (half a second of 1,200 a minute)
  });

  it("keeps Anthropic's input and output windows, not the tighter `tokens`, and a declaration over the headers", () => {
    const seen = observe(
      EMPTY,
      {
        requests: { limit: 50, remaining: 50 },
        tokens: { limit: 8_000, remaining: 8_000 },
        input: { limit: 40_000, remaining: 40_000 },
        output: { limit: 8_000, remaining: 8_000 },
      },
      0,
    );
    expect(Object.keys(seen.buckets).sort()).toEqual(["input", "output", "requests"]);
    const declared = declare(seen, { rpm: 30, tpm: null }, 0);
    const after = observe(declared, { requests: { limit: 50, remaining: 50 } }, 0);
    expect([after.source, after.buckets.requests?.perMinute]).toEqual(["declared", 30]);
  });

  it("gives back what a reservation took beyond the usage (Anthropic's output, charged as produced)", () => {
    const state = observe(EMPTY, { requests: { limit: 12_000, remaining: 100 }, output: { limit: 12_000, remaining: 100 } }, -10_000);
    const full = lease(state, ask("j", 10, "t", { tokens: 0, input: 0, output: 50 }), 0); // the output bucket full (half a second: 100)
    expect(full.lease.granted).toBe(2);
    const settled = settle(full.state, { output: 90 }); // the two calls wrote 5 tokens each
    const again = (s: PacerState) => lease(s, ask("j", 10, "t", { tokens: 0, input: 0, output: 50 }), 0).lease.granted;
    expect(again(full.state)).toBe(0);
    expect(again(settled)).toBe(1); // 90 given back: one more call of 50 fits
  });

  it("waits out a retry-after whatever the buckets hold", () => {
    const state = observe(declare(EMPTY, { rpm: 600, tpm: null }, 0), { retryAfterMs: 2_000 }, 0);
    expect(lease(state, ask("j", 5), 500).lease).toMatchObject({ granted: 0, waitMs: 1_500 });
    expect(lease(state, ask("j", 5), 2_000).lease.granted).toBe(5);
  });

  it("blocks the shared pacer for at most MAX_SHARED_BLOCK_MS whatever the retry-after says, and cuts a stored block back to it", () => {
    const tenDays = 864_000_000;
    const state = observe(declare(EMPTY, { rpm: 600, tpm: null }, 0), { retryAfterMs: tenDays }, 0);
    expect(state.blockedUntil).toBe(MAX_SHARED_BLOCK_MS);
    expect(lease(state, ask("other", 1), MAX_SHARED_BLOCK_MS).lease.granted).toBe(1);
    // A state stored before the bound (or written by anything else) says ten days: loading it bounds it.
    const stored: PacerState = { ...state, blockedUntil: tenDays };
    expect(bounded(stored, 5_000).blockedUntil).toBe(5_000 + MAX_SHARED_BLOCK_MS);
    expect(bounded({ ...state, blockedUntil: Number.NaN }, 0).blockedUntil).toBe(MAX_SHARED_BLOCK_MS);
    expect(bounded(state, 0)).toBe(state);
  });

  it("shares in tokens: equal per tenant, then per job of a tenant, and lends an unused share at once", () => {
    const state = declare(EMPTY, { rpm: 100_000, tpm: 600_000 }, 0); // 10,000 tokens a second: 20 calls of 500
    const got = run(
      state,
      [
        { id: "a1", tenant: "a" },
        { id: "a2", tenant: "a" },
        { id: "b1", tenant: "b" },
      ],
      20_000,
    );
    const total = (got.a1 as number) + (got.a2 as number) + (got.b1 as number);
    expect(total).toBeGreaterThanOrEqual(0.97 * 400); // the whole limit is used
    expect(total).toBeLessThanOrEqual(0.97 * 400 + 25);
    expect((got.b1 as number) / total).toBeGreaterThan(0.45); // tenant b: half
    expect((got.b1 as number) / total).toBeLessThan(0.55);
    expect(Math.abs((got.a1 as number) - (got.a2 as number)) / total).toBeLessThan(0.05); // tenant a's half split evenly
    // Alone, a job gets the whole limit: the others' shares are not held for them.
    expect(run(state, [{ id: "a1", tenant: "a" }], 20_000).a1).toBeGreaterThanOrEqual(0.97 * 400);
  });
});

describe("fairness between tenants, as a property", () => {
  // ~0.1 s of CPU a seed (a simulated clock, jumping from ask to ask): the test's time is a count of seeds,
  // and its timeout only a ceiling far above it for a machine running two suites beside a CPU hog.
  it("with N tenants and any number of jobs each, all asking, each tenant gets 1/N within 10 %, on a slow key and a fast one", { timeout: 120_000 }, () => {
    for (let seed = 1; seed <= 30; seed++) {
      const random = seeded(seed);
      const tenants = 2 + Math.floor(random() * 4); // 2–5
      const jobs = Array.from({ length: tenants }, (_, t) =>
        Array.from({ length: 1 + Math.floor(random() * (t === 0 ? 30 : 4)) }, (_, j) => ({
          id: `t${t}j${j}`,
          tenant: `t${t}`,
          calls: 1 + Math.floor(random() * 60),
        })),
      ).flat();
      const rpm = random() < 0.5 ? 120 : 6_000;
      const ms = rpm === 120 ? 240_000 : 20_000; // 480 calls on the slow key, 2,000 on the fast one
      const got = run(declare(EMPTY, { rpm, tpm: null }, 0), jobs, ms, { tokens: 0, input: 0, output: 0 });
      const total = Object.values(got).reduce((a, b) => a + b, 0);
      expect(total, `seed ${seed}`).toBeGreaterThan(0.9 * (rpm / 60_000) * ms);
      for (let t = 0; t < tenants; t++) {
        const mine = jobs.filter((j) => j.tenant === `t${t}`).reduce((n, j) => n + (got[j.id] as number), 0);
        expect(
          Math.abs(mine / total - 1 / tenants),
          `seed ${seed}: tenant t${t} of ${tenants} (${jobs.filter((j) => j.tenant === `t${t}`).length} jobs) got ${mine} of ${total} at ${rpm} RPM`,
        ).toBeLessThanOrEqual(0.1 / tenants);
      }
    }
  });

  it("a tenant's jobs split its share evenly, and one that comes back catches up no more than a quantum", () => {
    const state = declare(EMPTY, { rpm: 6_000, tpm: null }, 0);
    const got = run(
      state,
      [
        { id: "a1", tenant: "a" },
        { id: "a2", tenant: "a" },
        { id: "a3", tenant: "a" },
        { id: "b1", tenant: "b" },
      ],
      20_000,
      { tokens: 0, input: 0, output: 0 },
    );
    const a = (got.a1 as number) + (got.a2 as number) + (got.a3 as number);
    for (const id of ["a1", "a2", "a3"]) expect(Math.abs((got[id] as number) - a / 3)).toBeLessThanOrEqual(0.1 * (a / 3));
    // b was served alone for a long while, then a arrives: a does not get that time back in one burst.
    let s = state;
    for (let now = 0; now < 10_000; now += 100) s = lease(s, ask("b1", 50, "b", { tokens: 0, input: 0, output: 0 }), now).state;
    const first = lease(s, ask("a1", 1_000, "a", { tokens: 0, input: 0, output: 0 }), 10_000);
    expect(first.lease.granted).toBeLessThanOrEqual(Math.ceil(6_000 / 60 / 2) + 1); // one quantum: half a second's share, not ten seconds' worth
  });
});

describe("an answer's remaining count", () => {
  it("does not count the calls leased after the answer came: they are taken from it", () => {
    let state = observe(EMPTY, { requests: { limit: 2_400, remaining: 20 }, at: -10_000 }, -10_000); // learned long ago: the bucket is full (half a second: 20)
    const first = lease(state, ask("j", 8), 0); // 8 leased at 0: 12 left
    state = first.state;
    expect(first.lease.granted).toBe(8);
    // An answer produced at 0, before those 8 reached the provider, says 20 are left: still 12 (and what refills).
    const before = lease(state, ask("j", 50), 5).lease.granted;
    state = observe(state, { requests: { limit: 2_400, remaining: 20 }, at: 0 }, 5);
    expect(lease(state, ask("j", 50), 5).lease.granted).toBe(before);
    expect(before).toBeGreaterThanOrEqual(12);
    // An answer produced after them saying 4 are left: 4.
    const later = observe(lease(state, ask("j", 0), 5).state, { requests: { limit: 2_400, remaining: 4 }, at: 6 }, 6);
    expect(lease(later, ask("j", 50), 6).lease.granted).toBeLessThanOrEqual(4 + 8); // and what refills in the lease's 200 ms: 7.8
  });
});
