/**
 * Embedding blocking: the LSH (cosines from the kept vectors, candidates by band), and resolve
 * run in memory with scripted vectors — pairs by meaning, each record's top_k, bounded reads per
 * placement, a failed embedding compared with nothing, records with nothing to embed.
 */
import { describe, expect, it } from "vitest";
import { BANDS, bandKeys, rowsFor } from "../../../src/operators/embedding-blocking/lsh";
import { packedCosine, packVector, unpackVector } from "../../../src/lib/packed-vector";
import { BUCKET_READ, PLACEMENT_READS, type EmbeddingBlocking } from "../../../src/operators/embedding-blocking/stages";
import { resolveOperator, type PairInput, type ResolveJobSpec } from "../../../src/operators/resolve/plan";
import { joinOperator, type ChooseTask, type JoinJobSpec, type PairTask } from "../../../src/operators/join/plan";
import { seeded } from "../../../src/lib/seeded";
import { compileCall, interpretText } from "../../../src/engine/attempt";
import { EMBEDDING_SCHEMA } from "../../../src/llm/embeddings";
import { DEFAULT_RENDER_LIMITS } from "../../../src/template/render-budget";
import { MemoryPlan, type Answer } from "./memory-plan";
import { base, call } from "./specs";

const DIMS = 64;

function gaussian(random: () => number): number {
  return Math.sqrt(-2 * Math.log(random() || 1e-12)) * Math.cos(2 * Math.PI * random());
}

const unit = (v: number[]) => {
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
};

/** A vector at cosine ≈ `similarity` with `to` (both unit): `to` mixed with a random direction. */
function near(to: number[], similarity: number, random: () => number): number[] {
  const noise = unit(to.map(() => gaussian(random)));
  const weight = Math.sqrt(1 - similarity * similarity) / similarity;
  return unit(to.map((x, i) => x + weight * (noise[i] as number)));
}

const exact = (a: number[], b: number[]) => a.reduce((n, x, i) => n + x * (b[i] as number), 0);

describe("LSH", () => {
  it("the kept vectors' cosine is within 0.01 of the exact one", () => {
    const random = seeded(1);
    for (let i = 0; i < 50; i++) {
      const a = unit(Array.from({ length: 1536 }, () => gaussian(random)));
      const b = near(a, random(), random);
      expect(Math.abs(packedCosine(unpackVector(packVector(a)), unpackVector(packVector(b))) - exact(a, b))).toBeLessThan(0.01);
    }
    expect(packedCosine(new Int8Array([1, 2]), new Int8Array([1, 2, 3]))).toBe(0); // other lengths: never alike
  });

  it("a blocking's embedding call keeps its validated vector packed; an embed job's stays as numbers", () => {
    const usage = { input_tokens: 3, output_tokens: 0 };
    const packed = compileCall(call("{{ item }}", { outputSchema: EMBEDDING_SCHEMA, embedding: { dimensions: null, packed: true } }), DEFAULT_RENDER_LIMITS);
    const plain = compileCall(call("{{ item }}", { outputSchema: EMBEDDING_SCHEMA, embedding: { dimensions: null } }), DEFAULT_RENDER_LIMITS);
    const answer = interpretText("[0.5, -0.25, 1]", packed, 10_000, usage);
    expect(answer).toMatchObject({ kind: "success", output: packVector([0.5, -0.25, 1]) });
    expect(Array.from(unpackVector((answer as { output: string }).output))).toEqual([64, -32, 127]);
    expect(interpretText("[0.5, -0.25, 1]", plain, 10_000, usage)).toMatchObject({ output: [0.5, -0.25, 1] });
    expect(interpretText('["x"]', packed, 10_000, usage).kind).toBe("invalid"); // validated before it is packed
  });

  it("pairs at the threshold share a band nearly always, unrelated ones seldom", () => {
    const random = seeded(2);
    const shares = (a: number[], b: number[], rows: number) => {
      const [x, y] = [bandKeys(a, rows), bandKeys(b, rows)];
      return x.some((k, i) => k === y[i]);
    };
    let close = 0;
    let apart = 0;
    for (let i = 0; i < 300; i++) {
      const a = unit(Array.from({ length: DIMS }, () => gaussian(random)));
      if (shares(a, near(a, 0.9, random), rowsFor(0.9))) close++;
      if (shares(a, unit(Array.from({ length: DIMS }, () => gaussian(random))), rowsFor(0.9))) apart++;
    }
    expect(close / 300).toBeGreaterThan(0.95);
    expect(apart / 300).toBeLessThan(0.15);
    expect(bandKeys(unit(Array.from({ length: DIMS }, () => 1)), 8)).toHaveLength(BANDS);
  });
});

const blocking = (over: Partial<EmbeddingBlocking> = {}): EmbeddingBlocking => ({
  call: call("{{ item }}", { model: "openai/text-embedding-3-small", embedding: { dimensions: null } }),
  threshold: 0.85,
  topK: 10,
  rows: rowsFor(0.85),
  cross: false,
  ...over,
});

const spec = (over: Partial<EmbeddingBlocking> = {}): ResolveJobSpec => ({
  ...base("resolve"),
  compare: call("{{ item_a }} {{ item_b }}"),
  resolution: null,
  blocking: { keys: ["name"], method: "embedding", threshold: 0.85 },
  maxComparisons: 10_000,
  neighbours: blocking(over),
});

/** Embeddings by each record's `group` (near one direction per group), or failures; comparisons match within a group. */
function answers(records: { group?: string; fail?: boolean }[], seed = 3) {
  const random = seeded(seed);
  const centres = new Map<string, number[]>();
  const vectors = records.map((r) => {
    const group = r.group ?? "none";
    let centre = centres.get(group);
    if (!centre) centres.set(group, (centre = unit(Array.from({ length: DIMS }, () => gaussian(random)))));
    return near(centre, 0.97, random);
  });
  return (task: { stage: string; index: number; input: unknown }): Answer => {
    // As the call worker keeps a blocking's embedding: packed (src/engine/attempt.ts).
    if (task.stage === "embed") return records[task.index]?.fail ? { error: "500" } : { output: packVector(vectors[task.index] as number[]) };
    const { a, b } = task.input as PairInput;
    return { output: { match: records[a]?.group === records[b]?.group } };
  };
}

/** Counts the candidates every placement reads (the reader's `keyed`), per placement. */
function countingKeyed(run: MemoryPlan<ResolveJobSpec>): number[] {
  const reads: number[] = [];
  const keyed = run.reader.keyed.bind(run.reader);
  let placing = -1;
  const advance = resolveOperator.advance;
  run.reader.keyed = (stage, key, limit) => {
    expect(limit).toBe(BUCKET_READ);
    const found = keyed(stage, key, limit);
    reads[placing] = (reads[placing] ?? 0) + found.length;
    return found;
  };
  (run as unknown as { op: typeof resolveOperator }).op = {
    ...resolveOperator,
    advance: (s, reader, trigger) => {
      if (trigger?.stage === "embed") placing = trigger.index;
      return advance(s, reader, trigger);
    },
  };
  return reads;
}

describe("resolve with an embedding blocking", () => {
  const names = ["IBM", "International Business Machines", "Globex", "Globex Corp", "Initech"];
  const records = names.map((name, i) => ({ name, group: ["ibm", "ibm", "globex", "globex", "initech"][i] as string }));

  it("compares records whose embeddings are near, whatever their spelling, and closes the clusters", () => {
    const run = new MemoryPlan(resolveOperator, spec()).start(records);
    expect(run.pending().map((t) => t.stage)).toEqual(Array(5).fill("embed"));
    run.run(answers(records));
    const compared = run.dispatched.filter((d) => d.startsWith("compare"));
    expect(compared).toHaveLength(2); // IBM/International Business Machines, Globex/Globex Corp
    expect(run.end).toMatchObject({ status: "completed", output: { clusters: [[0, 1], [2, 3], [4]], failed: 0, embeddings_failed: 0 } });
    expect(resolveOperator.vars(run.spec, { stage: "embed", index: 1, input: run.tasks.get("embed:1")?.input }, run.reader)).toEqual({
      item: "international business machines",
    });
  });

  it("each record is compared with its top_k nearest at most; every placement reads at most BANDS × BUCKET_READ candidates", () => {
    const many = Array.from({ length: 120 }, (_, i) => ({ name: `n${i}`, group: i < 100 ? "dup" : `solo${i}` }));
    const run = new MemoryPlan(resolveOperator, spec({ topK: 3 })).start(many);
    const reads = countingKeyed(run);
    run.run(answers(many));
    expect(Math.max(...reads.filter((n) => n !== undefined))).toBeLessThanOrEqual(PLACEMENT_READS);
    const compares = [...run.tasks.values()].filter((t) => t.stage === "compare");
    expect(compares.length).toBeLessThanOrEqual(120 * 3);
    const per = new Map<number, number>();
    for (const t of compares) for (const i of [(t.input as PairInput).a, (t.input as PairInput).b]) per.set(i, (per.get(i) ?? 0) + 1);
    // The hundred near duplicates: one cluster through each one's nearest, though each reads at most BUCKET_READ of its buckets.
    const clusters = (run.end?.output as { clusters: number[][] }).clusters;
    expect(clusters[0]).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(clusters).toHaveLength(21);
  });

  it("reads every record's neighbours twice in all (the pairs, once; the end), never once per comparison", () => {
    const many = Array.from({ length: 60 }, (_, i) => ({ name: `n${i}`, group: `g${i % 15}` }));
    const run = new MemoryPlan(resolveOperator, spec()).start(many);
    const done = run.reader.done.bind(run.reader);
    let reads = 0;
    run.reader.done = (stage) => {
      if (stage === "neighbours") reads++;
      return done(stage);
    };
    run.run(answers(many));
    expect(run.stages.get("compare")?.total).toBeGreaterThan(50);
    expect(reads).toBe(2);
  });

  it("a failed embedding: its record is compared with nothing and counted; recover never re-embeds it", () => {
    const failing = records.map((r, i) => (i === 1 ? { ...r, fail: true } : r));
    const run = new MemoryPlan(resolveOperator, spec()).start(failing).run(answers(failing));
    expect(run.end?.output).toMatchObject({ clusters: [[0], [1], [2, 3], [4]], embeddings_failed: 1 });
    expect(run.recover()).toBe(0);
  });

  it("a record with nothing to embed is placed at the start with no neighbours", () => {
    const run = new MemoryPlan(resolveOperator, spec()).start([...records, { group: "ibm" }]);
    expect(run.stages.get("embed")?.total).toBe(5);
    expect(run.tasks.get("neighbours:5")).toMatchObject({ state: "done", output: { near: [], failed: true } });
    run.run(answers([...records, { group: "ibm" }]));
    expect(run.end?.output).toMatchObject({ clusters: [[0, 1], [2, 3], [4], [5]], embeddings_failed: 1 });
  });

  it("the estimate counts each record's embedding exactly and its comparisons at their bound", () => {
    const s = spec({ topK: 2 });
    const estimate = resolveOperator.estimateTasks?.(s, resolveOperator.plan(s, records));
    expect(estimate?.tasks.filter((t) => t.stage === "embed")).toHaveLength(5);
    expect(estimate?.tasks.filter((t) => t.stage === "compare")).toHaveLength(10);
    expect(estimate?.note).toContain("5 embedding calls");
  });
});

const joinSpec = (strategy: "pairs" | "classify", over: Partial<EmbeddingBlocking> = {}): JoinJobSpec => ({
  ...base("join"),
  strategy,
  comparisons: 0,
  call: call("{{ left }} {{ right }}"),
  choose: strategy === "classify" ? call("{% for right in candidates %}{{ right }}{% endfor %}") : null,
  cascade: null,
  neighbours: blocking({ cross: true, topK: 2, ...over }),
  blockingKeys: ["name"],
});

describe("join with an embedding blocking", () => {
  const left = [
    { name: "IBM", group: "ibm" },
    { name: "Acme", group: "acme" },
    { name: "Initech", group: "initech" },
  ];
  const right = [
    { name: "ACME Incorporated", group: "acme" },
    { name: "International Business Machines", group: "ibm" },
    { name: "Globex", group: "globex" },
    { name: "Acme Inc.", group: "acme" },
  ];
  const items = [...left, ...right];
  /** The pairs of the two lists alike in meaning: IBM's, and Acme's two. */
  const FOUND: [number, number][] = [
    [0, 1],
    [1, 0],
    [1, 3],
  ];
  const judge = (task: { stage: string; index: number; input: unknown }): Answer => {
    if (task.stage === "embed") return answers(items)(task);
    if (task.stage === "items" && "candidates" in (task.input as object)) {
      const { left: l, rights } = task.input as ChooseTask;
      const matches = (rights as { group: string }[]).flatMap((r, n) => (r.group === (l as { group: string }).group ? [n] : []));
      return { output: { matches } };
    }
    const envelope = task.input as PairTask & { item?: PairTask }; // behind a cascade, the pair is wrapped
    const { left: l, right: r } = envelope.item ?? envelope;
    return { output: { match: (l as { group: string }).group === (r as { group: string }).group } };
  };

  it("pairs: each left item judged with its nearest right items only, right indices in their own list", () => {
    const run = new MemoryPlan(joinOperator, joinSpec("pairs")).start([left, right]).run(judge);
    expect(run.dispatched.filter((d) => d.startsWith("embed"))).toHaveLength(7);
    expect(run.end).toMatchObject({
      status: "completed",
      output: {
        pairs: FOUND,
        strategy: "pairs",
        comparisons: 3, // IBM–International…, Acme–ACME…, Acme–Acme Inc.: Initech and Globex meet nothing
        embeddings_failed: 0,
      },
    });
    expect(joinOperator.mainStage(run.spec)).toBe("items");
  });

  it("classify: one call per left item with neighbours, choosing among them", () => {
    const run = new MemoryPlan(joinOperator, joinSpec("classify")).start([left, right]).run(judge);
    expect(run.dispatched.filter((d) => d.startsWith("items"))).toHaveLength(2);
    expect(run.end?.output).toMatchObject({
      pairs: [
        [0, 1],
        [1, 0],
        [1, 3],
      ],
      strategy: "classify",
    });
  });

  it("a cascade on the pairs found: the cheaper model first, the job's model only where it is unsure", () => {
    const cheap = call("{{ left }} {{ right }}", { model: "openai/cheap" });
    const spec = { ...joinSpec("pairs"), cascade: { call: cheap, acceptAbove: 0.9, rejectBelow: 0.1 } };
    const run = new MemoryPlan(joinOperator, spec).start([left, right]);
    run.run((task, vars) => {
      if (task.stage !== "cascade") return judge(task);
      const { left: l, right: r } = vars as { left: { group: string; name: string }; right: { group: string } };
      const same = l.group === r.group;
      return { output: { match: same, confidence: l.name === "IBM" ? 0.6 : 0.95 } }; // unsure of IBM's pair only
    });
    expect(run.dispatched.filter((d) => d.startsWith("cascade"))).toHaveLength(3);
    expect(run.dispatched.filter((d) => d.startsWith("items"))).toEqual(["items:0"]); // IBM's pair, on to the job's model
    expect(run.end?.output).toMatchObject({
      pairs: [
        [0, 1],
        [1, 0],
        [1, 3],
      ],
      comparisons: 3,
    });
  });

  it("a cascade with a target on the pairs found: its sample drawn from those pairs, the oracle's answers taken for it", () => {
    const cheap = call("{{ left }} {{ right }}", { model: "openai/cheap" });
    const target = { metric: "precision" as const, value: 0.9, confidence: 0.9, sample: { size: 2 }, seed: 7 };
    const spec = { ...joinSpec("pairs"), cascade: { call: cheap, acceptAbove: null, rejectBelow: null, target } };
    const run = new MemoryPlan(joinOperator, spec).start([left, right]);
    run.run((task, vars) => {
      if (task.stage !== "cascade") return judge(task);
      const { left: l, right: r } = vars as { left: { group: string }; right: { group: string } };
      return { output: { match: l.group === r.group, confidence: 0.9 } };
    });
    expect(run.stages.get("sample")?.total).toBe(2); // of the three pairs found
    expect(run.end).toMatchObject({
      status: "completed",
      output: {
        pairs: FOUND,
        comparisons: 3,
      },
    });
  });

  it("top_k bounds each left item's judgements", () => {
    const run = new MemoryPlan(joinOperator, joinSpec("pairs", { topK: 1 })).start([left, right]).run(judge);
    expect((run.end?.output as { comparisons: number }).comparisons).toBe(2);
  });

  it("no pair at all: the job ends with none", () => {
    const far = [
      { name: "x", group: "a" },
      { name: "y", group: "b" },
    ];
    const run = new MemoryPlan(joinOperator, joinSpec("pairs")).start([far.slice(0, 1), far.slice(1)]).run(answers(far));
    expect(run.end).toMatchObject({ status: "completed", output: { pairs: [], comparisons: 0 } });
  });
});
