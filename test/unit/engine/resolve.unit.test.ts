/**
 * Entity resolution: blocking (which pairs are compared, bounded before any work), the plan run
 * in memory (comparisons, transitive closure, resolutions per cluster, recover), every input in
 * exactly one cluster.
 */
import { describe, expect, it } from "vitest";
import { blockPairs, blockingKey, MAX_TRIGRAM_KEY_CHARS, MAX_TRIGRAM_WORK, MAX_TRIGRAMS } from "../../../src/operators/resolve/blocking";
import { clustersOf, resolveOperator, type ClusterInput, type PairInput, type ResolveJobSpec } from "../../../src/operators/resolve/plan";
import { MemoryPlan, type Answer } from "./memory-plan";
import { base, call } from "./specs";

describe("blocking", () => {
  it("keys: the fields' values trimmed, lower-cased, spaces collapsed; dotted paths; no key, no pair; no prototype lookups", () => {
    expect(blockingKey({ name: "  Acme   Inc. ", city: "Oslo" }, ["name", "city"])).toBe("acme inc. oslo");
    expect(blockingKey({ org: { name: "Acme" } }, ["org.name"])).toBe("acme");
    expect(blockingKey({}, ["name"])).toBeNull();
    expect(blockingKey({}, ["__proto__", "constructor.name"])).toBeNull();
  });

  it("exact, prefix and trigram blocks", () => {
    const names = (list: string[]) => list.map((name) => ({ name }));
    expect(blockPairs(names(["Acme", " acme ", "Globex", "ACME"]), { keys: ["name"], method: "exact", threshold: null }, 100).pairs).toEqual([
      [0, 1],
      [0, 3],
      [1, 3],
    ]);
    expect(blockPairs(names(["acme inc", "acme corp", "acorn"]), { keys: ["name"], method: "prefix", threshold: 3 }, 100).pairs).toEqual([[0, 1]]);
    expect(blockPairs(names(["jonathan smith", "mary jones", "jonathon smith"]), { keys: ["name"], method: "trigram", threshold: 0.5 }, 100).pairs).toEqual([
      [0, 2],
    ]);
  });

  it("a trigram blocking whose keys all share trigrams stops after MAX_TRIGRAM_WORK candidates, before its pairs are counted", () => {
    const names = Array.from({ length: 4_000 }, (_, i) => ({ name: `${i} incorporated` })); // " in", "inc", … in every key
    const counted = blockPairs(names, { keys: ["name"], method: "trigram", threshold: 0.99 }, 100_000);
    expect(counted.over).toBe(true);
    expect(counted.work).toBeGreaterThan(MAX_TRIGRAM_WORK);
  });

  it("reads 110 keys of 80,000 characters as their first MAX_TRIGRAM_KEY_CHARS, and refuses keys over MAX_TRIGRAMS in all having indexed nothing", () => {
    const huge = Array.from({ length: 110 }, (_, i) => ({ name: `${i}`.padEnd(80_000, String.fromCharCode(97 + (i % 26))) }));
    const counted = blockPairs(huge, { keys: ["name"], method: "trigram", threshold: 0.5 }, 100_000);
    // Each key counts its first MAX_TRIGRAM_KEY_CHARS (110,110 trigrams in all): the same pairs as the keys cut there.
    const cut = huge.map(({ name }) => ({ name: name.slice(0, MAX_TRIGRAM_KEY_CHARS) }));
    expect(counted).toEqual(blockPairs(cut, { keys: ["name"], method: "trigram", threshold: 0.5 }, 100_000));
    const many = Array.from({ length: Math.ceil(MAX_TRIGRAMS / MAX_TRIGRAM_KEY_CHARS) + 1 }, (_, i) => ({ name: `${i} `.padEnd(5_000, "z") }));
    const refused = blockPairs(many, { keys: ["name"], method: "trigram", threshold: 0.5 }, 100_000);
    expect(refused).toMatchObject({ over: true, work: 0, pairs: [] });
    expect(refused.trigrams).toBeGreaterThan(MAX_TRIGRAMS);
  });

  it("reads a trigram key's first MAX_TRIGRAM_KEY_CHARS characters: keys alike there are alike", () => {
    const head = "acme corporation of springfield ".repeat(40).slice(0, MAX_TRIGRAM_KEY_CHARS);
    const records = [{ name: `${head}${"x".repeat(5_000)}` }, { name: `${head}${"y".repeat(5_000)}` }, { name: "globex" }];
    expect(blockPairs(records, { keys: ["name"], method: "trigram", threshold: 0.99 }, 100).pairs).toEqual([[0, 1]]);
  });

  it("stops counting past the bound: a blocking over it costs no more than the bound", () => {
    const same = Array.from({ length: 1_000 }, () => ({ name: "x" })); // 499,500 pairs in one block
    const counted = blockPairs(same, { keys: ["name"], method: "exact", threshold: null }, 10_000);
    expect(counted).toMatchObject({ over: true });
    expect(counted.pairs).toHaveLength(10_001);
  });
});

const spec = (resolution: boolean): ResolveJobSpec => ({
  ...base("resolve"),
  compare: call("{{ item_a }} {{ item_b }}"),
  resolution: resolution ? call("{{ items }}") : null,
  blocking: { keys: ["g"], method: "exact", threshold: null },
  maxComparisons: 100,
});
const INPUTS = [
  { g: 1, n: "a" },
  { g: 1, n: "b" },
  { g: 1, n: "c" },
  { g: 2, n: "d" },
  { g: 2, n: "e" },
];

/** Matches by pair `a-b`; a resolution answers the names of its cluster joined. */
function answers(matches: Record<string, boolean | null>) {
  return (task: { stage: string; input: unknown }, vars: Record<string, unknown>): Answer => {
    if (task.stage === "resolve") return { output: (vars.items as { n: string }[]).map((i) => i.n).join("+") };
    const { a, b } = task.input as PairInput;
    const match = matches[`${a}-${b}`];
    return match === null ? { error: "500" } : { output: { match: match ?? false } };
  };
}

describe("resolve: comparisons, closure, resolutions", () => {
  it("compares only the pairs of a block, closes matches transitively, and puts every input in one cluster", () => {
    const run = new MemoryPlan(resolveOperator, spec(false)).start(INPUTS);
    expect(run.stages.get("records")).toMatchObject({ total: 5, completed: 5, succeeded: 5 }); // as given, no call
    run.run(answers({ "0-1": true, "1-2": true, "0-2": false, "3-4": false }));
    expect(run.dispatched).toEqual(["compare:0", "compare:1", "compare:2", "compare:3"]);
    expect(run.end).toMatchObject({ status: "completed", output: { clusters: [[0, 1, 2], [3], [4]], resolved: null, failed: 0 } });
  });

  it("the comparisons read the records by index", () => {
    const run = new MemoryPlan(resolveOperator, spec(false)).start(INPUTS);
    expect(resolveOperator.vars(run.spec, { stage: "compare", index: 3, input: { a: 3, b: 4 } }, run.reader)).toEqual({ item_a: INPUTS[3], item_b: INPUTS[4] });
  });

  it("resolves each cluster of two or more with one call; a singleton's record is its input", () => {
    const run = new MemoryPlan(resolveOperator, spec(true)).start(INPUTS).run(answers({ "0-1": true, "3-4": true }));
    expect(run.dispatched.filter((d) => d.startsWith("resolve"))).toEqual(["resolve:0", "resolve:1"]);
    expect((run.tasks.get("resolve:0")?.input as ClusterInput).members).toEqual([0, 1]);
    expect(run.end?.output).toEqual({ clusters: [[0, 1], [2], [3, 4]], resolved: ["a+b", INPUTS[2], "d+e"], failed: 0 });
  });

  it("a failed comparison is no match; recover re-runs it and plans the resolutions anew", () => {
    const matches: Record<string, boolean | null> = { "0-1": true, "1-2": null };
    const run = new MemoryPlan(resolveOperator, spec(true)).start(INPUTS).run(answers(matches));
    expect(run.end?.output).toMatchObject({ clusters: [[0, 1], [2], [3], [4]], resolved: ["a+b", INPUTS[2], INPUTS[3], INPUTS[4]], failed: 1 });
    matches["1-2"] = true;
    expect(run.recover()).toBe(1);
    run.run(answers(matches));
    expect(run.end?.output).toEqual({ clusters: [[0, 1, 2], [3], [4]], resolved: ["a+b+c", INPUTS[3], INPUTS[4]], failed: 0 });
  });

  it("no pair at all: every input its own cluster at once", () => {
    const run = new MemoryPlan(resolveOperator, spec(true)).start([{ g: 1 }, { g: 2 }]);
    expect(run.end?.output).toEqual({ clusters: [[0], [1]], resolved: [{ g: 1 }, { g: 2 }], failed: 0 });
  });

  it("closure by union-find: chains, cycles and repeats", () => {
    expect(
      clustersOf(6, [
        [4, 5],
        [0, 2],
        [2, 4],
        [1, 3],
        [0, 4],
      ]),
    ).toEqual([
      [0, 2, 4, 5],
      [1, 3],
    ]);
  });
});
