/**
 * The README's (and the guide's) shell examples, run as written with `sh` against the test server,
 * as a newcomer runs them after `npm start -- --fake-llm`: BASE, KEY and DEMO_TOOLS set as the
 * banner's `export` line sets them. Each must end its job as the comment under it shows.
 */
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { call, newTenant } from "./harness/api.ts";
import { base, fakeUrl } from "./harness/context.ts";
import { runnableCommands } from "./harness/readme.ts";

const commands = runnableCommands();

function run(name: string, env: Record<string, string>): any {
  const command = commands.get(name);
  if (!command) throw new Error(`no <!-- run: ${name} --> block`);
  const result = spawnSync("sh", ["-c", command], { encoding: "utf8", env: { PATH: process.env.PATH ?? "", ...env }, timeout: 60_000 });
  expect(result.status, result.stderr).toBe(0);
  return JSON.parse(result.stdout);
}

describe("the README's commands, as written", () => {
  it("has one for every operator, and no other", () => {
    expect([...commands.keys()].sort()).toEqual([
      "agentic-map",
      "agentic-map with tools",
      "classify",
      "embed",
      "filter",
      "join",
      "map",
      "map-reduce",
      "pipelines",
      "rank",
      "reduce",
      "resolve",
    ]);
  });

  it("each ends its job as the README shows", async () => {
    const { key } = await newTenant(base());
    const env = { BASE: base(), KEY: key, DEMO_TOOLS: `${fakeUrl()}/_demo/tools` };

    const map = run("map", env);
    expect(map).toMatchObject({ total: 2, failures: [], total_attempts: 2 });
    expect(map.successes.map((r: any) => r.output.echo).sort()).toEqual([
      "Extract metadata from: Attention Is All You Need",
      "Extract metadata from: Deep Residual Learning",
    ]);

    const agent = run("agentic-map", env);
    expect(agent.failures).toEqual([]);
    expect(agent.successes[0]).toMatchObject({ output_text: "Acme Pro costs 10 USD a month. DONE", stop_reason: "natural", turns: 2 });
    const session = (await call(base(), "GET", `/v1/sessions/${agent.successes[0].session_id}`, { token: key })).body;
    expect(session.messages.find((m: any) => m.role === "tool")).toMatchObject({ name: "lookup", content: 'lookup: demo answer for {"q":"Acme"}' });

    const tools = run("agentic-map with tools", env);
    expect(tools.failures).toEqual([]);
    const byCompany = Object.fromEntries(tools.successes.map((r: any) => [r.input.company, r]));
    expect(byCompany.Acme).toMatchObject({ output_text: "Pro costs 10 USD a month. DONE", turns: 3 });
    expect(byCompany.Globex).toMatchObject({ output_text: "Globex has one plan at 30 USD. DONE", turns: 1 });

    const reduce = run("reduce", env);
    expect(reduce).toMatchObject({ type: "reduce", status: "completed", total: 3 });
    expect(reduce.output).toHaveProperty("facts");

    const mapReduce = run("map-reduce", env);
    expect(mapReduce).toMatchObject({ type: "map_reduce", status: "completed" });
    expect(mapReduce.stages.map((s: any) => s.name)).toEqual(["map", "shuffle", "reduce", "synthesis"]);

    const pipeline = run("pipelines", env);
    expect(pipeline).toMatchObject({ type: "pipeline", status: "completed", error: null });
    expect(JSON.parse(pipeline.output).echo).toMatch(/^Write a guide from: /);

    expect(run("filter", env)).toMatchObject({ type: "filter", status: "completed", output: { kept: [0, 1], dropped: 0, failed: 0 } });
    // Offline every score is 10 (the fake's number, within the schema's maximum): the three tie, and each comparison goes to A, the lower index.
    expect(run("rank", env)).toMatchObject({
      type: "rank",
      status: "completed",
      output: [
        { index: 0, score: 10, wins: 2 },
        { index: 1, score: 10, wins: 1 },
      ],
    });
    expect(run("resolve", env)).toMatchObject({ type: "resolve", status: "completed", output: { clusters: [[0, 1], [2]], resolved: null, failed: 0 } });
    expect(run("classify", env)).toMatchObject({ type: "classify", status: "completed", output: { counts: { complaint: 2, question: 0 }, failed: 0 } });

    const embedded = run("embed", env);
    expect(embedded).toMatchObject({ type: "embed", status: "completed", succeeded: 2 });
    const vectors = (await call(base(), "GET", `/v1/jobs/${embedded.id}/results`, { token: key })).body.results;
    for (const r of vectors) expect(r.embedding).toHaveLength(256);
    // IBM meets International Business Machines only (the demo's vectors alike): one comparison.
    expect(run("join", env)).toMatchObject({ type: "join", status: "completed", output: { pairs: [[0, 0]], failed: 0, strategy: "pairs", comparisons: 1 } });
  });
});
