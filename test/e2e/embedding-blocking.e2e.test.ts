/**
 * Embedding blocking (contract v4, "Embeddings, joins, embedding blocking") over HTTP against the
 * fake, whose `/v1/embeddings` vectors a test scripts (`emb=NAME`: texts of one NAME point the
 * same way): resolve compares records near in meaning whatever their spelling ("IBM" and
 * "International Business Machines"), a join judges each left item with its nearest right items
 * (pairs and classify), the dry run states the embedding calls and the comparisons' bound, and
 * the bounds are refused with nothing stored.
 */
import { describe, expect, it } from "vitest";
import { allResults, call, newTenant, waitForJob } from "./harness/api.ts";
import { base, fakeStats, uniqueTag } from "./harness/context.ts";
import { COMPANIES_LEFT, COMPANIES_RIGHT, SAME_ID_PAIRS, sameIdPredicate } from "./harness/companies.ts";

const MODEL = "openai/gpt-6-luna";
const EMBEDDER = "openai/text-embedding-3-small";
const json = (value: unknown) => `json:${encodeURIComponent(JSON.stringify(value))}`;

// Spelled apart, meant alike: `emb` is what is embedded (the fake's directive says which vectors are alike).
const COMPANIES = [
  { i: 0, g: "ibm", name: "IBM", emb: "IBM <<fake emb=ibm>>" },
  { i: 1, g: "ibm", name: "International Business Machines", emb: "International Business Machines <<fake emb=ibm>>" },
  { i: 2, g: "globex", name: "Globex", emb: "Globex <<fake emb=globex>>" },
  { i: 3, g: "globex", name: "Globex Corporation", emb: "Globex Corporation <<fake emb=globex>>" },
  { i: 4, g: "initech", name: "Initech", emb: "Initech <<fake emb=initech>>" },
];

const resolveBody = (tag: string, blocking: Record<string, unknown> = {}) => ({
  inputs: COMPANIES,
  comparison_template:
    `Same company? {{ item_a.name }} / {{ item_b.name }} ` +
    `<<fake tag=${tag} id={{ item_a.i }}-{{ item_b.i }} steps={{ '${json({ match: true })}' if item_a.g == item_b.g else '${json({ match: false })}' }}>>`,
  blocking: { method: "embedding", keys: ["emb"], model: EMBEDDER, threshold: 0.85, top_k: 3, ...blocking },
  model: MODEL,
});

describe("resolve with an embedding blocking", () => {
  it("compares only records near in meaning, whatever their spelling; the neighbours are results of their own", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("emb-resolve");
    const created = await call(base(), "POST", "/v1/resolve", { token: key, body: resolveBody(tag) });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const job = await waitForJob(base(), key, created.body.job_id);
    expect(job).toMatchObject({ type: "resolve", status: "completed", output: { clusters: [[0, 1], [2, 3], [4]], failed: 0, embeddings_failed: 0 } });
    expect((await fakeStats(tag)).requests).toBe(2); // IBM with International Business Machines, Globex with Globex Corporation
    expect(job.stages.map((s: any) => [s.name, s.total, s.succeeded])).toEqual([
      ["records", 5, 5],
      ["embed", 5, 5],
      ["neighbours", 5, 5],
      ["compare", 2, 2],
      ["resolve", 0, 0],
    ]);
    const placed = await allResults(base(), key, job.id, "&stage=neighbours");
    const near = (i: number) => placed.find((r) => r.index === i)?.neighbours as [number, number][];
    // Whichever of IBM and International Business Machines was placed second found the other (at cosine ≈ 0.99), and only it.
    const found = [...near(0).filter(([j]) => j === 1), ...near(1).filter(([j]) => j === 0)];
    expect(found).toHaveLength(1);
    expect(found[0]![1]).toBeGreaterThan(0.95);
    expect(near(4)).toEqual([]); // Initech: nothing near
    const embeds = await allResults(base(), key, job.id, "&stage=embed");
    for (const r of embeds) expect(r).toMatchObject({ success: true, dimensions: 1536, output: null, usage: { output_tokens: 0 } });
    expect(job.stages.find((s: any) => s.name === "embed").cost_usd).toBeGreaterThan(0); // at the embedding model's price
  });

  it("execution batch: the embeddings and then the comparisons go through the provider's batch API", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("emb-batch");
    const inputs = COMPANIES.map((c) => ({ ...c, emb: c.emb.replace("<<fake ", `<<fake tag=${tag}-e `) }));
    const body = { ...resolveBody(tag), inputs, execution: { mode: "batch" } };
    const created = await call(base(), "POST", "/v1/resolve", { token: key, body });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const job = await waitForJob(base(), key, created.body.job_id);
    expect(job).toMatchObject({ status: "completed", output: { clusters: [[0, 1], [2, 3], [4]], embeddings_failed: 0 } });
    expect((await fakeStats(`${tag}-e`)).batched).toBe(5);
    expect((await fakeStats(tag)).batched).toBe(2);
    expect(job.stages.find((s: any) => s.name === "embed").cost_usd).toBeGreaterThan(0); // at the batch price
  });

  it("the dry run states the embedding calls and the comparisons at their bound", async () => {
    const { key } = await newTenant(base());
    const dry = await call(base(), "POST", "/v1/resolve?dry_run=true", { token: key, body: resolveBody(uniqueTag("emb-dry")) });
    expect(dry.status, JSON.stringify(dry.body)).toBe(200);
    const estimate = dry.body.estimate ?? dry.body;
    expect(estimate.by_stage.embed).toMatchObject({ calls: 5, output_tokens: 0 });
    expect(estimate.by_stage.compare.calls).toBe(10); // five records × top_k 3, no more than the ten pairs there are
    expect(JSON.stringify(estimate)).toContain("5 embedding calls");
  });

  it("refuses what cannot run, storing nothing", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("emb-refused");
    const cases: [Record<string, unknown>, number, string][] = [
      [{ model: undefined }, 400, "blocking.model"],
      [{ model: "anthropic/claude-haiku-4-5" }, 400, "blocking.model"],
      [{ threshold: 1.5 }, 400, "blocking.threshold"],
      [{ top_k: 0 }, 400, "top_k"],
      [{ top_k: 3, max: 5 }, 422, "too_many_comparisons"],
    ];
    for (const [blocking, status, says] of cases) {
      const { max, ...rest } = blocking;
      const body = { ...resolveBody(tag, rest), ...(max ? { max_comparisons: max } : {}) };
      const res = await call(base(), "POST", "/v1/resolve", { token: key, body });
      expect(res.status, JSON.stringify(blocking)).toBe(status);
      expect(JSON.stringify(res.body.error)).toContain(says);
    }
    const keysOnly = await call(base(), "POST", "/v1/resolve", {
      token: key,
      body: { ...resolveBody(tag), blocking: { keys: ["name"], method: "exact", model: EMBEDDER } },
    });
    expect(keysOnly.status).toBe(400);
    const noKeys = await call(base(), "POST", "/v1/resolve", { token: key, body: { ...resolveBody(tag), blocking: { method: "trigram" } } });
    expect(noKeys.status).toBe(400);
    expect(JSON.stringify(noKeys.body.error)).toContain("blocking.keys");
    expect((await call(base(), "GET", "/v1/jobs", { token: key })).body.jobs).toEqual([]);
  });
});

const [LEFT, RIGHT] = [COMPANIES_LEFT, COMPANIES_RIGHT];

describe("join with an embedding blocking", () => {
  const predicate = sameIdPredicate;

  it("pairs: each left item judged with its nearest right items only", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("emb-join");
    const body = { left: LEFT, right: RIGHT, predicate_template: predicate(tag), model: MODEL, blocking: { method: "embedding", model: EMBEDDER, top_k: 2 } };
    const created = await call(base(), "POST", "/v1/join", { token: key, body });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const job = await waitForJob(base(), key, created.body.job_id);
    expect(job).toMatchObject({
      type: "join",
      status: "completed",
      output: {
        pairs: SAME_ID_PAIRS,
        strategy: "pairs",
        comparisons: 2,
        embeddings_failed: 0,
      },
    });
    expect((await fakeStats(tag)).requests).toBe(2); // never Initech, never Globex: nothing near them
    const judged = await allResults(base(), key, job.id);
    expect(judged.map((r) => [r.input.l, r.input.r]).sort()).toEqual([
      [0, 1],
      [1, 0],
    ]);
  });

  it("classify: one call per left item with neighbours, choosing among them", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("emb-join-classify");
    const left = LEFT.map((l) => ({ ...l, script: `<<fake tag=${tag} steps=${json({ matches: [0] })}>>` })); // each call chooses its first candidate
    const body = {
      left,
      right: RIGHT,
      predicate_template: "Same? {{ left.id }} / {{ right.id }} {{ left.script }}",
      model: MODEL,
      strategy: "classify",
      blocking: { method: "embedding", model: EMBEDDER, keys: ["name"], top_k: 2 },
    };
    const created = await call(base(), "POST", "/v1/join", { token: key, body });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const job = await waitForJob(base(), key, created.body.job_id);
    expect(job).toMatchObject({
      status: "completed",
      output: {
        strategy: "classify",
        comparisons: 2,
        pairs: SAME_ID_PAIRS,
      },
    });
    expect((await fakeStats(tag)).requests).toBe(2); // IBM and Acme: Initech has no neighbour, so no call
  });
});
