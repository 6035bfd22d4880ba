/**
 * `npm run bench:joins` — S17 (#54): a JOIN_LEFT × JOIN_RIGHT join (default 2,000 × 500) and a
 * RESOLVE_RECORDS-record resolve (default 5,000) with scripted ground truth, against the fake model
 * (JOIN_LATENCY_MS a call, default 20), one after another on one server. The right list is company
 * names; each left record is a misspelling of one of them (its truth); the judge is scripted to be
 * right, so recall is what the blocking kept and precision is 1 unless a call fails. Rows: the join
 * with trigram blocking one call per pair (`pairs`), the same pairs as one call per left item
 * (`classify`, the semantic-join rewrite), the join with embedding blocking; the resolve with
 * trigram blocking and with embedding blocking, on names of made-up words, then on names of a
 * shared vocabulary (where trigram blocking is refused). Comparisons (pairs judged), calls, recall
 * and precision against the truth, wall time, dollars (gpt-6-luna's list price, the embeddings at
 * text-embedding-3-small's).
 *
 * The fake's embeddings are scripted (`emb=NAME`: texts of one NAME at cosine ≈ 0.99, others ≈ 0):
 * a record's text names its truth's company, but for EMBED_MISS of them (default 5 %) it names
 * nothing of the kind — what an embedding model that did not see the likeness does. So the
 * embedding rows measure the blocking's machinery (its LSH, its top_k, its bounds) over that
 * miss rate, not an embedding model's quality.
 */
import { call, newTenant, waitForJob } from "../test/e2e/harness/api.ts";
import { startFanout } from "../test/e2e/harness/fanout-server.ts";
import { startFakeModelServer } from "../test/fake-model/server.ts";
import { crossPairs } from "../src/operators/join/blocking.ts";
import { seeded } from "../src/lib/seeded.ts";

const LEFT = Number(process.env.JOIN_LEFT ?? 2_000);
const RIGHT = Number(process.env.JOIN_RIGHT ?? 500);
const RECORDS = Number(process.env.RESOLVE_RECORDS ?? 5_000);
const LATENCY_MS = Number(process.env.JOIN_LATENCY_MS ?? 20);
const MODEL = "openai/gpt-6-luna";
const BLOCKING = { keys: ["name"], method: "trigram" as const, threshold: 0.35 };
const EMBED_MISS = Number(process.env.EMBED_MISS ?? 0.05);
const EMBEDDING = { method: "embedding", keys: ["emb"], model: "openai/text-embedding-3-small", threshold: 0.85, top_k: 5 };
/** What a record's embedding reads: its name and its company's (the fake's directive), or for EMBED_MISS of them a name of its own. */
const embText = (text: string, company: string, own: string) => `${text} <<fake emb=${random() < EMBED_MISS ? `miss-${own}` : company}>>`;

const random = seeded(17);
const WORDS = ["acme", "globex", "initech", "umbrella", "hooli", "vandelay", "stark", "wayne", "tyrell", "cyberdyne", "soylent", "wonka", "oscorp"];
const SUFFIXES = ["industries", "holdings", "labs", "systems", "group", "partners", "foods", "motors"];
const pick = <T>(list: T[]): T => list[Math.floor(random() * list.length)] as T;
const name = (i: number) => `${pick(WORDS)} ${pick(WORDS)} ${pick(SUFFIXES)} ${i}`;
/** A misspelling: a dropped letter, a swapped pair, "inc" or a case change, as records of one company differ. */
function variant(text: string): string {
  const r = random();
  if (r < 0.25) {
    const at = 1 + Math.floor(random() * (text.length - 2));
    return text.slice(0, at) + text.slice(at + 1);
  }
  if (r < 0.5) return `${text} inc`;
  if (r < 0.75) return text.toUpperCase();
  const at = 1 + Math.floor(random() * (text.length - 3));
  return text.slice(0, at) + text[at + 1] + text[at] + text.slice(at + 2);
}

const fake = await startFakeModelServer({ latencyMs: LATENCY_MS });
const fanout = await startFanout({
  vars: { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: "sk-bench-joins", MAX_ITEMS_PER_JOB: "100000", MAX_REQUEST_BYTES: String(32 * 1024 * 1024) },
});
const { key } = await newTenant(fanout.url);
const requests = async (tag: string) => ((await (await fetch(`${fake.url}/_fake/stats?tag=${tag}`)).json()) as { requests: number }).requests;
const enc = (v: unknown) => encodeURIComponent(JSON.stringify(v));

async function run(path: string, body: Record<string, unknown>) {
  const started = performance.now();
  const created = await call(fanout.url, "POST", path, { token: key, body: { model: MODEL, concurrency: 64, ...body } });
  if (created.status !== 202) throw new Error(`${path}: ${created.status} ${JSON.stringify(created.body).slice(0, 400)}`);
  const job = await waitForJob(fanout.url, key, created.body.job_id, 3_600_000);
  return { job, secs: (performance.now() - started) / 1000 };
}

const scored = (found: [number, number][], truth: Set<string>) => {
  const hits = found.filter(([a, b]) => truth.has(`${a}:${b}`)).length;
  return { recall: hits / truth.size, precision: found.length === 0 ? 1 : hits / found.length };
};

/** One join job (trigram blocking unless the body has its own) and its row: the pairs it found against the truth. */
async function joinRow(what: string, tag: string, truth: Set<string>, body: Record<string, unknown>): Promise<void> {
  const { job, secs } = await run("/v1/join", { blocking: BLOCKING, ...body, max_comparisons: 100_000 });
  row(what, job.output.comparisons, await requests(tag), scored(job.output.pairs, truth), secs, job.cost_usd);
}

/** One resolve job and its row: the pairs of its clusters against the truth (or the 422 that refused it). */
async function resolveRow(what: string, tag: string, truth: Set<string>, body: Record<string, unknown>): Promise<void> {
  const started = performance.now();
  const created = await call(fanout.url, "POST", "/v1/resolve", { token: key, body: { model: MODEL, concurrency: 64, max_comparisons: 100_000, ...body } });
  if (created.status === 422) {
    rows.push(`| ${what} | refused: 422 \`${created.body.error.code}\` | | | | | |`);
    return void console.log(rows.at(-1));
  }
  if (created.status !== 202) throw new Error(`resolve: ${created.status} ${JSON.stringify(created.body).slice(0, 400)}`);
  const job = await waitForJob(fanout.url, key, created.body.job_id, 3_600_000);
  const secs = (performance.now() - started) / 1000;
  const clusters = job.output.clusters as number[][];
  const found: [number, number][] = clusters.flatMap((c) => c.flatMap((a, i) => c.slice(i + 1).map((b) => [a, b] as [number, number])));
  const total = (job.stages as { name: string; total: number }[]).find((s) => s.name === "compare")?.total ?? 0;
  row(what, total, await requests(tag), scored(found, truth), secs, job.cost_usd);
}

const rows: string[] = [];
const row = (what: string, comparisons: number, calls: number, s: { recall: number; precision: number }, secs: number, usd: number) => {
  rows.push(
    `| ${what} | ${comparisons.toLocaleString("en-US")} | ${calls.toLocaleString("en-US")} | ${s.recall.toFixed(3)} | ${s.precision.toFixed(3)} | ${secs.toFixed(1)} | ${usd.toFixed(4)} |`,
  );
  console.log(rows.at(-1));
};

try {
  const right = Array.from({ length: RIGHT }, (_, r) => ({ id: r, name: name(r) }));
  const truthOf = Array.from({ length: LEFT }, () => Math.floor(random() * RIGHT));
  const left = truthOf.map((r, l) => ({ id: l, truth: r, name: variant((right[r] as { name: string }).name) }));
  const rightEmb = right.map((x) => ({ ...x, emb: `${x.name} <<fake emb=c${x.id}>>` }));
  const leftEmb = left.map((x) => ({ ...x, emb: embText(x.name, `c${x.truth}`, `l${x.id}`) }));
  const truth = new Set(truthOf.map((r, l) => `${l}:${r}`));
  const stamp = Date.now();

  // Pairs: the judge says match exactly when the left record's truth is the right record.
  const pairsTag = `s17-pairs-${stamp}`;
  const yes = enc({ match: true, reason: "same" });
  const no = enc({ match: false, reason: "different" });
  const pairPredicate = `Same company? {{ left.name }} / {{ right.name }} <<fake tag=${pairsTag} id={{ left.id }}-{{ right.id }} steps=json:{{ '${yes}' if left.truth == right.id else '${no}' }}>>`;
  await joinRow("join, trigram blocking, one call per pair", pairsTag, truth, { left, right, predicate_template: pairPredicate, strategy: "pairs" });

  // Classify: the same candidates (the blocking's), the judge naming the true one's number among them.
  const classifyTag = `s17-classify-${stamp}`;
  const counted = crossPairs(left, right, BLOCKING, 100_000);
  const candidates = new Map<number, number[]>();
  for (const [l, r] of counted.pairs) candidates.set(l, [...(candidates.get(l) ?? []), r]);
  const wanting = left.map((x) => ({ ...x, want: (candidates.get(x.id) ?? []).flatMap((r, n) => (r === x.truth ? [n] : [])) }));
  const choosePredicate = `Same company? {{ left.name }} / {{ right.name }} <<fake tag=${classifyTag} id={{ left.id }} steps=json:{{ ({"matches": left.want} | tojson) | urlencode }}>>`;
  await joinRow("join, trigram blocking, one call per left item (classify)", classifyTag, truth, {
    left: wanting,
    right,
    predicate_template: choosePredicate,
    strategy: "classify",
  });

  // Embedding blocking: each left record judged with its top_k nearest right records.
  const embTag = `s17-emb-${stamp}`;
  await joinRow("join, embedding blocking (top_k 5), one call per pair", embTag, truth, {
    left: leftEmb,
    right: rightEmb,
    predicate_template: pairPredicate.replace(pairsTag, embTag),
    strategy: "pairs",
    blocking: EMBEDDING,
  });

  // Resolve: RECORDS records of RECORDS/4 companies, four spellings each; the judge says match exactly within a company.
  const resolveTag = `s17-resolve-${stamp}`;
  const companies = Math.max(1, Math.floor(RECORDS / 4));
  // Made-up words (the join's thirteen-word vocabulary makes 5,000 records share so many trigrams that the blocking refuses: 422).
  const letters = "abcdefghijklmnopqrstuvwxyz";
  const word = () => Array.from({ length: 5 + Math.floor(random() * 4) }, () => letters[Math.floor(random() * 26)]).join("");
  // No word shared across companies (a suffix, "inc"): with one, every record is a candidate of an eighth of the others — over the bound.
  const names = Array.from({ length: companies }, () => `${word()} ${word()}`);
  const edited = (text: string) => {
    let v = variant(text);
    while (v.endsWith(" inc")) v = variant(text);
    return v;
  };
  const records = Array.from({ length: RECORDS }, (_, i) => {
    const entity = i % companies;
    const spelled = edited(names[entity] as string);
    return { i, entity, name: spelled, emb: embText(spelled, `e${entity}`, `r${i}`) };
  });
  const sameEntity = new Set<string>();
  for (let a = 0; a < RECORDS; a++) for (let b = a + companies; b < RECORDS; b += companies) sameEntity.add(`${a}:${b}`);
  const comparison = (tag: string) =>
    `Same? {{ item_a.name }} / {{ item_b.name }} <<fake tag=${tag} id={{ item_a.i }}-{{ item_b.i }} steps=json:{{ '${enc({ match: true })}' if item_a.entity == item_b.entity else '${enc({ match: false })}' }}>>`;
  const n = RECORDS.toLocaleString("en-US");
  await resolveRow(`resolve ${n} records, trigram blocking`, resolveTag, sameEntity, {
    inputs: records,
    comparison_template: comparison(resolveTag),
    blocking: BLOCKING,
  });
  const resolveEmbTag = `s17-resolve-emb-${stamp}`;
  await resolveRow(`resolve ${n} records, embedding blocking (top_k 5)`, resolveEmbTag, sameEntity, {
    inputs: records,
    comparison_template: comparison(resolveEmbTag),
    blocking: EMBEDDING,
  });
  // The same companies named from the join's thirteen words and eight suffixes: records share common tokens.
  const common = Array.from({ length: companies }, (_, c) => `${pick(WORDS)} ${pick(WORDS)} ${pick(SUFFIXES)} ${c}`);
  const shared = records.map((r) => {
    const spelled = edited(common[r.entity] as string);
    return { ...r, name: spelled, emb: embText(spelled, `e${r.entity}`, `r${r.i}`) };
  });
  const sharedTrigramTag = `s17-shared-trigram-${stamp}`;
  await resolveRow(`resolve ${n} records of shared words, trigram blocking`, sharedTrigramTag, sameEntity, {
    inputs: shared,
    comparison_template: comparison(sharedTrigramTag),
    blocking: BLOCKING,
  });
  const sharedEmbTag = `s17-shared-emb-${stamp}`;
  await resolveRow(`resolve ${n} records of shared words, embedding blocking (top_k 5)`, sharedEmbTag, sameEntity, {
    inputs: shared,
    comparison_template: comparison(sharedEmbTag),
    blocking: EMBEDDING,
  });

  console.log(
    `\nS17, ${LEFT} × ${RIGHT} join and a ${RECORDS}-record resolve, ${MODEL}, ${LATENCY_MS} ms a call, trigram threshold ${BLOCKING.threshold}, embeddings missing ${EMBED_MISS}\n` +
      `| run | comparisons | calls | recall | precision | wall s | USD |\n|---|---:|---:|---:|---:|---:|---:|\n${rows.join("\n")}`,
  );
} finally {
  await fanout.stop();
  await fake.close();
}
