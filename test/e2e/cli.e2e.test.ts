/** The `fanout` command line (the built bin) against a running Fanout and the fake model server. */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ECHO_SCHEMA, fake, newTenant } from "./harness/api.ts";
import { ownKeyTenant } from "./harness/limited-key.ts";
import { base, uniqueTag } from "./harness/context.ts";
import { fanoutCli } from "./harness/cli.ts";
import { freePort, ROOT } from "./harness/fanout-server.ts";
import { removeTempDirs, tempDir } from "./harness/temp-dir.ts";

afterAll(removeTempDirs); // the input files of the CLI runs

/** `ownKey`: the tenant calls the provider with a key of its own (a test that throttles cuts that key's limit, not the deployment's). */
async function setup(ownKey = false) {
  const { key } = await (ownKey ? ownKeyTenant() : newTenant(base()));
  const dir = tempDir("fanout-cli-");
  writeFileSync(join(dir, "prompt.j2"), "Summarize {{ item.title }} {{ item.d }}");
  writeFileSync(join(dir, "schema.json"), JSON.stringify(ECHO_SCHEMA));
  return { dir, env: { FANOUT_API_KEY: key, FANOUT_URL: base() } };
}

describe("fanout CLI", () => {
  it("names the server's URL when it cannot reach it", async () => {
    const { dir } = await setup();
    writeFileSync(join(dir, "items.jsonl"), '{"title": "a"}\n');
    const run = await fanoutCli(["map", "--model", "openai/x", "--template", join(dir, "prompt.j2"), "--input", join(dir, "items.jsonl")], {
      FANOUT_API_KEY: "fo_x",
      FANOUT_URL: `http://127.0.0.1:${await freePort()}`,
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^error: Could not reach the Fanout server at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)\. Is it running\?/m);
  });

  it("maps a CSV file to JSONL with plain progress lines when stderr is not a terminal", async () => {
    const { dir, env } = await setup();
    const tag = uniqueTag("cli-csv");
    const rows = Array.from({ length: 6 }, (_, i) => `"Paper, part ${i}","${fake(tag, i, "ok", 300)}"`);
    writeFileSync(join(dir, "items.csv"), `title,d\n${rows.join("\n")}\n`);
    const out = join(dir, "results.jsonl");
    const run = await fanoutCli(
      [
        "map",
        "--model",
        "openai/gpt-6-luna",
        "--template",
        join(dir, "prompt.j2"),
        "--schema",
        join(dir, "schema.json"),
        "--input",
        join(dir, "items.csv"),
        "--out",
        out,
        "--concurrency",
        "2",
      ],
      env,
    );
    expect(run.code).toBe(0);
    const results = readFileSync(out, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(results).toHaveLength(6);
    expect(results.map((r) => r.index).sort()).toEqual([0, 1, 2, 3, 4, 5]);
    expect(results.find((r) => r.index === 3).output.echo).toBe("Summarize Paper, part 3");
    expect(run.stderr).toMatch(/^progress: 0\/6 done, 0 failed/m);
    expect(run.stderr).toMatch(/^progress: 6\/6 done, 0 failed, [\d.]+\/s, ETA/m);
    expect(run.stderr).toMatch(/^done: 6\/6 items, 6 succeeded, 0 failed, 6 attempts, cost \$0\.\d{6}, job job_\w+ completed$/m);
    expect(run.stderr).not.toContain("\r");
  });

  it("--mode batch sends the calls as a provider batch, says so as it goes, and prints the cost; --budget-usd is a dollar budget", async () => {
    const { dir, env } = await setup();
    const tag = uniqueTag("cli-batch");
    writeFileSync(join(dir, "items.jsonl"), [0, 1, 2].map((i) => JSON.stringify({ title: `t${i}`, d: fake(tag, i) })).join("\n") + "\n");
    const run = await fanoutCli(
      [
        "map",
        "--model",
        "openai/gpt-6-luna",
        "--template",
        join(dir, "prompt.j2"),
        "--schema",
        join(dir, "schema.json"),
        "--input",
        join(dir, "items.jsonl"),
        "--mode",
        "batch",
        "--budget-usd",
        "1",
      ],
      env,
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/^batch b\w+: sent to the provider \(batch_\w+\), 3 requests of stage items$/m);
    expect(run.stderr).toMatch(/^batch b\w+: ended, 3 completed, 0 failed$/m);
    expect(run.stderr).toMatch(/^done: 3\/3 items, 3 succeeded, 0 failed, 3 attempts, cost \$0\.\d{6}, job job_\w+ completed$/m);
    const bad = await fanoutCli(
      ["map", "--model", "openai/gpt-6-luna", "--template", join(dir, "prompt.j2"), "--input", join(dir, "items.jsonl"), "--mode", "later"],
      env,
    );
    expect([bad.code, bad.stderr.split("\n")[0]]).toEqual([2, "error: --mode is realtime, batch or auto"]);
  });

  it("shows in its progress when the provider's 429s cut the calls at once", async () => {
    const { dir, env } = await setup(true);
    const tag = uniqueTag("cli-cap");
    // Room for 2 at the provider; the job asks for 6 (not paced: at most 16).
    const rows = Array.from({ length: 12 }, (_, i) => JSON.stringify({ title: `part ${i}`, d: `<<fake tag=${tag} id=${i} cap=2 ms=200>>` }));
    writeFileSync(join(dir, "items.jsonl"), `${rows.join("\n")}\n`);
    const run = await fanoutCli(
      [
        "map",
        "--model",
        "openai/gpt-6-luna",
        "--template",
        join(dir, "prompt.j2"),
        "--schema",
        join(dir, "schema.json"),
        "--input",
        join(dir, "items.jsonl"),
        "--concurrency",
        "6",
        "--max-retries",
        "10",
      ],
      env,
    );
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/^progress: \d+\/12 done, 0 failed, [\d.]+\/s, ETA \S+, [2-5] calls at once \(throttled\)$/m);
    expect(run.stderr).toMatch(/^done: 12\/12 items, 12 succeeded/m);
  });

  it("maps JSONL, writes to stdout, and exits 1 with a summary when items fail", async () => {
    const { dir, env } = await setup();
    const tag = uniqueTag("cli-jsonl");
    const lines = ["ok", "401", "ok"].map((s, i) => JSON.stringify({ title: `t${i}`, d: fake(tag, i, s) }));
    writeFileSync(join(dir, "items.jsonl"), `${lines.join("\n")}\n`);
    const run = await fanoutCli(["map", "--model", "openai/x", "--template", join(dir, "prompt.j2"), "--input", join(dir, "items.jsonl")], env);
    expect(run.code).toBe(1);
    expect(run.stdout.trim().split("\n")).toHaveLength(3);
    expect(run.stderr).toMatch(/done with failures: 3\/3 items, 2 succeeded, 1 failed/);
  });

  it("recover re-runs the failed items and follows that round with progress, like map", async () => {
    const { dir, env } = await setup();
    const tag = uniqueTag("cli-recover");
    const lines = ["ok", "401,ok", "ok"].map((s, i) => JSON.stringify({ title: `t${i}`, d: fake(tag, i, s) }));
    writeFileSync(join(dir, "items.jsonl"), `${lines.join("\n")}\n`);
    const first = await fanoutCli(["map", "--model", "openai/x", "--template", join(dir, "prompt.j2"), "--input", join(dir, "items.jsonl")], env);
    expect(first.code).toBe(1);
    const id = /job (job_\w+) completed/.exec(first.stderr)?.[1] as string;
    const run = await fanoutCli(["recover", id], env);
    expect(run.stdout).toBe(`${id} running: 1 tasks to run again\n`);
    expect(run.stderr).toMatch(/^progress: 0\/1 done, 0 failed/m);
    expect(run.stderr).toMatch(/^progress: 1\/1 done, 0 failed/m);
    expect(run.stderr).toMatch(new RegExp(`^done: 1 tasks re-run, job ${id} completed, 3 succeeded and 0 failed in all$`, "m"));
    expect(run.code).toBe(0);
  });

  it("prints no progress line before a refused request's error", async () => {
    const { dir, env } = await setup();
    writeFileSync(join(dir, "no-item.j2"), "Summarize nothing");
    writeFileSync(join(dir, "items.jsonl"), '{"title": "a"}\n');
    const run = await fanoutCli(["map", "--model", "openai/x", "--template", join(dir, "no-item.j2"), "--input", join(dir, "items.jsonl")], env);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^error: template_missing_item \(HTTP 400\)/);
    expect(run.stderr).not.toContain("progress");
  });

  it("lists in its usage every flag its messages name", async () => {
    const help = await fanoutCli(["--help"], {});
    expect(help.code).toBe(0);
    const sources = ["cli.ts", "cli-staged.ts", "cli-pipeline.ts", "cli-semantic.ts"].map((f) => readFileSync(join(ROOT, "client/src", f), "utf8")).join("\n");
    const named = new Set([...sources.matchAll(/["`(\s](--[a-z][a-z-]+)/g)].map((m) => m[1] as string));
    expect(named.size).toBeGreaterThan(20);
    for (const flag of named) expect(help.stdout, flag).toContain(flag);
  });

  it("filter FILE --predicate: prints the job's output; results --kept lists either side; classify --categories counts the labels", async () => {
    const { dir, env } = await setup();
    const tag = uniqueTag("cli-filter");
    const drop = `json:${encodeURIComponent(JSON.stringify({ keep: false }))}`;
    writeFileSync(join(dir, "papers.jsonl"), [0, 1, 2].map((i) => JSON.stringify({ title: `paper ${i}`, d: fake(tag, i, i === 1 ? drop : "ok") })).join("\n"));
    const filter = await fanoutCli(
      ["filter", join(dir, "papers.jsonl"), "--predicate", "About translation? {{ item.title }} {{ item.d }}", "--model", "openai/gpt-6-luna"],
      env,
    );
    expect(filter.code, filter.stderr).toBe(0);
    expect(JSON.parse(filter.stdout)).toEqual({ kept: [0, 2], dropped: 1, failed: 0 });
    const jobId = (await fanoutCli(["jobs", "--limit", "1"], env)).stdout.split("\t")[0] as string;
    const dropped = await fanoutCli(["results", jobId, "--kept", "false"], env);
    expect(
      dropped.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).index),
    ).toEqual([1]);

    const labelled = uniqueTag("cli-classify");
    writeFileSync(join(dir, "reviews.jsonl"), [0, 1, 2].map((i) => JSON.stringify({ title: `review ${i}`, d: fake(labelled, i) })).join("\n"));
    const classify = await fanoutCli(
      ["classify", "--input", join(dir, "reviews.jsonl"), "--categories", "nlp, vision", "--model", "openai/gpt-6-luna", "--template", join(dir, "prompt.j2")],
      env,
    );
    expect(classify.code, classify.stderr).toBe(0);
    expect(JSON.parse(classify.stdout)).toEqual({ counts: { nlp: 3, vision: 0 }, failed: 0 }); // the fake answers the first label
    const noPredicate = await fanoutCli(["filter", join(dir, "papers.jsonl"), "--model", "openai/gpt-6-luna"], env);
    expect(noPredicate.code).toBe(2);
    expect(noPredicate.stderr).toContain("--predicate is required");
  });

  it("evaluate JOB_ID --judge --criterion prints the pass rates with their intervals; results --failed true lists the items the judge failed", async () => {
    const { dir, env } = await setup();
    const tag = uniqueTag("cli-eval");
    const verdict = (pass: boolean) => `gpt-6-sol~json:${encodeURIComponent(JSON.stringify({ verdicts: { sound: { pass, reason: "r" } } }))}`;
    writeFileSync(
      join(dir, "claims.jsonl"),
      [0, 1, 2].map((i) => JSON.stringify(`claim ${i} ${fake(tag, i, `gpt-6-luna~ok,${verdict(i !== 2)}`)}`)).join("\n"),
    );
    const filter = await fanoutCli(["filter", join(dir, "claims.jsonl"), "--predicate", "True? {{ item }}", "--model", "openai/gpt-6-luna"], env);
    expect(filter.code, filter.stderr).toBe(0);
    const jobId = (await fanoutCli(["jobs", "--limit", "1"], env)).stdout.split("\t")[0] as string;
    const evaluated = await fanoutCli(
      ["evaluate", jobId, "--judge", "openai/gpt-6-sol", "--criterion", "sound: The answer follows from the claim", "--sample", "3", "--seed", "2"],
      env,
    );
    expect(evaluated.code, evaluated.stderr).toBe(0);
    expect(JSON.parse(evaluated.stdout)).toMatchObject({ sample_size: 3, seed: 2, criteria: { sound: { passed: 2, judged: 3, pass_rate: 2 / 3 } } });
    const evaluationId = (await fanoutCli(["jobs", "--limit", "1"], env)).stdout.split("\t")[0] as string;
    const failing = await fanoutCli(["results", evaluationId, "--failed", "true"], env);
    expect(
      failing.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).index),
    ).toEqual([2]);
    const noCriterion = await fanoutCli(["evaluate", jobId, "--judge", "openai/gpt-6-sol"], env);
    expect([noCriterion.code, noCriterion.stderr.split("\n")[0]]).toEqual([2, 'error: --judge needs at least one --criterion "name: what passing means"']);
  });

  it("rank FILE --criteria --k prints the top k; resolve --block-keys prints the clusters", async () => {
    const { dir, env } = await setup();
    const tag = uniqueTag("cli-rank");
    const score = (n: number) => `json:${encodeURIComponent(JSON.stringify({ score: n }))}`;
    writeFileSync(join(dir, "papers.jsonl"), [2, 9, 5].map((n, i) => JSON.stringify({ title: `paper ${i}`, d: fake(tag, i, score(n)) })).join("\n"));
    writeFileSync(join(dir, "item.j2"), "{{ item.title }} {{ item.d }}");
    const rank = await fanoutCli(
      ["rank", join(dir, "papers.jsonl"), "--criteria", "newest", "--k", "2", "--template", join(dir, "item.j2"), "--model", "openai/gpt-6-luna"],
      env,
    );
    expect(rank.code, rank.stderr).toBe(0);
    expect(JSON.parse(rank.stdout)).toEqual([
      { index: 1, score: 9 },
      { index: 2, score: 5 },
    ]);

    writeFileSync(join(dir, "companies.jsonl"), ["Acme Inc", "ACME inc", "Globex"].map((name) => JSON.stringify({ name })).join("\n"));
    writeFileSync(join(dir, "compare.j2"), `{{ item_a.name }} / {{ item_b.name }} ${fake(uniqueTag("cli-resolve"), "pair")}`);
    const resolve = await fanoutCli(
      [
        "resolve",
        join(dir, "companies.jsonl"),
        "--comparison-template",
        join(dir, "compare.j2"),
        "--block-keys",
        "name",
        "--block-method",
        "exact",
        "--model",
        "openai/gpt-6-luna",
      ],
      env,
    );
    expect(resolve.code, resolve.stderr).toBe(0);
    expect(JSON.parse(resolve.stdout)).toEqual({ clusters: [[0, 1], [2]], resolved: null, failed: 0 });
    const badMethod = await fanoutCli(
      [
        "resolve",
        join(dir, "companies.jsonl"),
        "--comparison-template",
        join(dir, "compare.j2"),
        "--block-keys",
        "name",
        "--block-method",
        "soundex",
        "--model",
        "m",
      ],
      env,
    );
    expect(badMethod.code).toBe(2);
    expect(badMethod.stderr).toContain("--block-method is exact, prefix or trigram");
  });

  it("--cache TTL_SECS: a second run is answered from the response cache, and the estimate says so", async () => {
    const { dir, env } = await setup();
    const tag = uniqueTag("cli-cache");
    writeFileSync(join(dir, "items.jsonl"), [0, 1].map((i) => JSON.stringify({ title: `t${i}`, d: fake(tag, i) })).join("\n"));
    const args = [
      "--model",
      "openai/gpt-6-luna",
      "--template",
      join(dir, "prompt.j2"),
      "--schema",
      join(dir, "schema.json"),
      "--input",
      join(dir, "items.jsonl"),
      "--cache",
      "3600",
    ];
    expect((await fanoutCli(["map", ...args], env)).code).toBe(0);
    const estimate = await fanoutCli(["estimate", "map", ...args], env);
    expect(JSON.parse(estimate.stdout)).toMatchObject({ calls: 2, cached_calls: 2, total_tokens: 0 });
    const again = await fanoutCli(["map", ...args], env);
    expect(
      again.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).cached),
    ).toEqual([true, true]);
    expect((await fanoutCli(["map", ...args.slice(0, -2), "--cache", "0"], env)).code).toBe(2); // the API's 400
  });

  it("lists jobs, shows status and results, and cancels", async () => {
    const { dir, env } = await setup();
    const tag = uniqueTag("cli-jobs");
    writeFileSync(join(dir, "items.json"), JSON.stringify(Array.from({ length: 30 }, (_, i) => ({ title: `t${i}`, d: fake(tag, i, "ok", 400) }))));
    const mapping = fanoutCli(
      [
        "map",
        "--model",
        "openai/x",
        "--template",
        join(dir, "prompt.j2"),
        "--input",
        join(dir, "items.json"),
        "--concurrency",
        "1",
        "--out",
        join(dir, "o.jsonl"),
      ],
      env,
    );
    await new Promise((r) => setTimeout(r, 1_500));
    const jobs = await fanoutCli(["jobs"], env);
    expect(jobs.code).toBe(0);
    const jobId = jobs.stdout.split("\t")[0] as string;
    expect(jobId).toMatch(/^job_/);
    const cancel = await fanoutCli(["cancel", jobId], env);
    expect(cancel.stdout.trim()).toBe(`${jobId} cancelled`);
    const map = await mapping;
    expect(map.code).toBe(1); // not every item finished
    expect(map.stderr).toMatch(/job job_\w+ cancelled/);
    const status = await fanoutCli(["status", jobId], env);
    expect(JSON.parse(status.stdout)).toMatchObject({ id: jobId, status: "cancelled" });
    const results = await fanoutCli(["results", jobId, "--order", "completion"], env);
    expect(results.stdout.trim().split("\n").length).toBe(JSON.parse(status.stdout).completed);
  });

  it("explains usage and API errors with exit code 2", async () => {
    const { dir, env } = await setup();
    const noKey = await fanoutCli(["jobs"], { FANOUT_URL: base() });
    expect(noKey).toMatchObject({ code: 2 });
    expect(noKey.stderr).toContain("FANOUT_API_KEY");
    writeFileSync(join(dir, "bad.j2"), "no variable");
    writeFileSync(join(dir, "one.jsonl"), '{"a":1}\n');
    const bad = await fanoutCli(["map", "--model", "openai/x", "--template", join(dir, "bad.j2"), "--input", join(dir, "one.jsonl")], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("error: template_missing_item (HTTP 400)");
    expect(bad.stderr).toContain("prompt_template:");
    const unknown = await fanoutCli(["frobnicate"], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command "frobnicate"');
  });
});
