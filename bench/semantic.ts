/**
 * `npm run bench:semantic`: the semantic operators (#35) against the fake model server (200 ms a
 * call), one after another on one server. Each item's answer is scripted in its prompt, the same
 * whichever model asks, so both runs of a pair see the same answers:
 * - classify SEM_ITEMS (default 2,000) items into three labels with the job's model alone, then
 *   behind a cascade where the cheaper model is sure (confidence 0.95) of 70 % of them: calls
 *   and tokens per model, wall time;
 * - filter the same way (sure of 70 %: kept or dropped at once);
 * - rank SEM_ITEMS items for the top 10 with scores tied at the cut (its comparisons);
 * - resolve SEM_ITEMS records of SEM_ITEMS/4 entities (four spellings each) with a trigram blocking.
 */
import { call, newTenant, waitForJob } from "../test/e2e/harness/api.ts";
import { startFanout } from "../test/e2e/harness/fanout-server.ts";
import { startFakeModelServer } from "../test/fake-model/server.ts";

const N = Number(process.env.SEM_ITEMS ?? 2_000);
/** SEM_ONLY=resolve,rank: those operators only. */
const ONLY = new Set((process.env.SEM_ONLY ?? "classify,filter,rank,resolve").split(","));
const LATENCY_MS = 200;
const BIG = "openai/gpt-6-sol";
const CHEAP = "openai/gpt-6-luna";
const json = (value: unknown) => `json:${encodeURIComponent(JSON.stringify(value))}`;

const fake = await startFakeModelServer({ latencyMs: LATENCY_MS });
const fanout = await startFanout({ vars: { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: "sk-bench-semantic", MAX_ITEMS_PER_JOB: "10000" } });
const { key } = await newTenant(fanout.url);
const requests = async (tag: string): Promise<number> => ((await (await fetch(`${fake.url}/_fake/stats?tag=${tag}`)).json()) as { requests: number }).requests;

const sure = (i: number) => i % 10 < 7;

async function run(path: string, body: Record<string, unknown>, tag: string) {
  const started = performance.now();
  const created = await call(fanout.url, "POST", path, { token: key, body: { concurrency: 32, ...body } });
  if (created.status !== 202) throw new Error(`${path}: ${created.status} ${JSON.stringify(created.body)}`);
  const progress = setInterval(() => {
    void call(fanout.url, "GET", `/v1/jobs/${created.body.job_id}`, { token: key }).then((r) =>
      console.error(`${path}: ${r.body.status} ${r.body.completed}/${r.body.total}`),
    );
  }, 10_000);
  const job = await waitForJob(fanout.url, key, created.body.job_id, 3_600_000).finally(() => clearInterval(progress));
  const secs = (performance.now() - started) / 1000;
  const stages = (job.stages as { name: string; total: number; input_tokens?: number; usage?: { input_tokens: number; output_tokens: number } }[]).map(
    (s) => `${s.name} ${s.total}: ${((s.usage?.input_tokens ?? 0) + (s.usage?.output_tokens ?? 0)).toLocaleString("en-US")} tokens`,
  );
  return { job, secs, calls: await requests(tag), stages: stages.join("; ") };
}

const rows: string[] = [];
const row = (operator: string, runner: string, r: { secs: number; calls: number; stages: string }, output: string) => {
  rows.push(`| ${operator} | ${runner} | ${N} | ${r.secs.toFixed(1)} | ${r.calls.toLocaleString("en-US")} | ${r.stages} | ${output} |`);
  console.log(rows.at(-1));
};

try {
  for (const cascade of ONLY.has("classify") ? [false, true] : []) {
    const tag = `sem-classify-${cascade}-${Date.now()}`;
    const inputs = Array.from(
      { length: N },
      (_, i) => `review ${i} <<fake tag=${tag} id=${i} steps=${json({ label: ["a", "b", "c"][i % 3], confidence: sure(i) ? 0.95 : 0.6 })}>>`,
    );
    const r = await run(
      "/v1/classify",
      {
        inputs,
        categories: [{ name: "a" }, { name: "b" }, { name: "c" }],
        model: BIG,
        prompt_template: "{{ item }}",
        ...(cascade ? { cascade: { model: CHEAP } } : {}),
      },
      tag,
    );
    row("classify", cascade ? `cascade (${CHEAP} first)` : `${BIG} alone`, r, JSON.stringify(r.job.output.decided_by ?? r.job.output.counts));
  }
  for (const cascade of ONLY.has("filter") ? [false, true] : []) {
    const tag = `sem-filter-${cascade}-${Date.now()}`;
    const inputs = Array.from(
      { length: N },
      (_, i) => `paper ${i} <<fake tag=${tag} id=${i} steps=${json({ keep: i % 2 === 0, confidence: sure(i) ? 0.95 : 0.6 })}>>`,
    );
    const r = await run("/v1/filter", { inputs, predicate_template: "Keep? {{ item }}", model: BIG, ...(cascade ? { cascade: { model: CHEAP } } : {}) }, tag);
    row(
      "filter",
      cascade ? `cascade (${CHEAP} first)` : `${BIG} alone`,
      r,
      `kept ${r.job.output.kept.length}${r.job.output.decided_by ? `, ${JSON.stringify(r.job.output.decided_by)}` : ""}`,
    );
  }
  if (ONLY.has("rank")) {
    const tag = `sem-rank-${Date.now()}`;
    // Fifteen items score 9, the rest 0–8: the top 10 falls inside the fifteen, compared pairwise (105 calls).
    const inputs = Array.from({ length: N }, (_, i) => ({
      i,
      d: `<<fake tag=${tag} id=${i} steps=${json({ score: i % 100 === 7 && i < 1_500 ? 9 : i % 9 })}>>`,
    }));
    const comparison = `{{ item_a.i }} or {{ item_b.i }} <<fake tag=${tag}-cmp id={{ item_a.i }}-{{ item_b.i }}>>`;
    const r = await run(
      "/v1/rank",
      { inputs, criteria: "highest", k: 10, model: CHEAP, prompt_template: "{{ item.i }} {{ item.d }}", comparison_template: comparison },
      tag,
    );
    row("rank", `top 10, ${CHEAP}`, { ...r, calls: r.calls + (await requests(`${tag}-cmp`)) }, `${(r.job.output as unknown[]).length} listed`);
  }
  if (ONLY.has("resolve")) {
    const tag = `sem-resolve-${Date.now()}`;
    const entities = Math.ceil(N / 4);
    // A made-up name per entity (letters from its number), four spellings: no word all records share.
    const base = (e: number) => {
      let x = (e + 1) * 2_654_435_761; // a multiplicative hash stepped per letter: names share few trigrams
      return Array.from({ length: 8 }, () => String.fromCharCode(97 + ((x = Math.imul(x ^ (x >>> 15), 2_246_822_519) >>> 0) % 26))).join("");
    };
    const spell = (e: number, v: number) => [base(e), base(e).toUpperCase(), `${base(e)}.`, `${base(e)}${base(e).at(-1)}`][v] as string;
    const inputs = Array.from({ length: N }, (_, i) => ({ e: i % entities, name: spell(i % entities, Math.floor(i / entities)) }));
    const same = json({ match: true });
    const other = json({ match: false });
    const comparison = `{{ item_a.name }} / {{ item_b.name }} <<fake tag=${tag} id=p steps={{ '${same}' if item_a.e == item_b.e else '${other}' }}>>`;
    const r = await run(
      "/v1/resolve",
      { inputs, comparison_template: comparison, blocking: { keys: ["name"], method: "trigram", threshold: 0.6 }, max_comparisons: 100_000, model: CHEAP },
      tag,
    );
    const clusters = r.job.output.clusters as number[][];
    row("resolve", `trigram 0.6, ${CHEAP}`, r, `${clusters.length} clusters (${entities} entities)`);
  }
} finally {
  await fanout.stop();
  await fake.close();
}
console.log(["| operator | runner | items | wall (s) | calls | stages: tasks and tokens | output |", "|---|---|---:|---:|---:|---|---|", ...rows].join("\n"));
