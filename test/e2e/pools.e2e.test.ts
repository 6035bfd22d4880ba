/**
 * Deployment pools (contract v4, "Providers as they fail"), over HTTP against the fake model: a
 * tenant's OpenAI credential is a pool of deployments (each its own base URL and key: the fake
 * tells them apart by key); calls spread by weight, a stage whose calls share a cacheable prefix
 * sticks to one deployment, a deployment that is down (`POST /_fake/outage {"key"}`) has its
 * circuit opened and is skipped while the others answer, each deployment is paced by its own
 * declared limits, and `GET /v1/providers` shows each deployment's state without its key.
 */
import { describe, expect, it } from "vitest";
import { call, fake, newTenant, waitForJob, type Tenant } from "./harness/api.ts";
import { base, fakeStats, fakeUrl, uniqueTag } from "./harness/context.ts";

interface Deployment {
  key: string;
  weight?: number;
  rate_limits?: Record<string, { rpm?: number; tpm?: number }>;
}

async function pooledTenant(deployments: Deployment[]): Promise<Tenant> {
  const tenant = await newTenant(base());
  const body = {
    deployments: deployments.map((d, i) => ({ base_url: `${fakeUrl()}/pool-${i}/v1`, api_key: d.key, weight: d.weight, rate_limits: d.rate_limits })),
  };
  const put = await call(base(), "PUT", "/v1/providers/openai", { token: tenant.key, body });
  expect(put.status, JSON.stringify(put.body)).toBe(200);
  return tenant;
}

const mapJob = (tag: string, n: number, extra: Record<string, unknown> = {}) => ({
  inputs: Array.from({ length: n }, (_, i) => ({ d: fake(tag, i, "ok") })),
  prompt_template: "Summarize {{ item.d }}",
  model: "openai/gpt-6-luna",
  concurrency: 8,
  ...extra,
});

/** How many of the tag's calls each key made (the fake records each call's bearer token). */
async function callsByKey(tag: string): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const auth of (await fakeStats(tag)).auth as string[]) {
    const key = auth.replace(/^Bearer /, "");
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

describe("deployment pools", () => {
  it("spreads a job's calls over the pool by weight, each deployment with its own key and base URL", async () => {
    const a = `sk-${uniqueTag("pool-a")}`;
    const b = `sk-${uniqueTag("pool-b")}`;
    const tenant = await pooledTenant([
      { key: a, weight: 3 },
      { key: b, weight: 1 },
    ]);
    const tag = uniqueTag("pool-spread");
    const job = await waitForJob(base(), tenant.key, (await call(base(), "POST", "/v1/map", { token: tenant.key, body: mapJob(tag, 120) })).body.job_id);
    expect(job).toMatchObject({ status: "completed", succeeded: 120 });
    const counts = await callsByKey(tag);
    expect([...counts.keys()].sort()).toEqual([a, b].sort()); // both deployments, and no other key
    expect(counts.get(a)).toBeGreaterThan(counts.get(b) ?? 0); // 3:1 (P(a ≤ b) over 120 calls is below 1e-9)
    expect(job.models).toEqual([
      {
        model: "openai/gpt-6-luna",
        circuit: "closed",
        answered: 0,
        deployments: [
          { deployment: 1, circuit: "closed" },
          { deployment: 2, circuit: "closed" },
        ],
      },
    ]);
  });

  it("a stage whose calls share a cacheable prefix sticks to one deployment (spreading would pay for the prefix on each)", async () => {
    const keys = [`sk-${uniqueTag("sticky-a")}`, `sk-${uniqueTag("sticky-b")}`];
    const tenant = await pooledTenant(keys.map((key) => ({ key })));
    const tag = uniqueTag("pool-sticky");
    const system = `You label things. ${"Weigh every detail of the item before you answer. ".repeat(100)}`; // ~1,300 tokens: OpenAI caches it
    const job = await waitForJob(
      base(),
      tenant.key,
      (await call(base(), "POST", "/v1/map", { token: tenant.key, body: mapJob(tag, 40, { system_prompt: system }) })).body.job_id,
    );
    expect(job).toMatchObject({ status: "completed", succeeded: 40 });
    expect([...(await callsByKey(tag)).values()]).toEqual([40]);
  });

  it("a deployment that is down has its circuit opened and is skipped: every item answered by the others; GET /v1/providers shows it open, without keys", async () => {
    const up = `sk-${uniqueTag("pool-up")}`;
    const down = `sk-${uniqueTag("pool-down")}`;
    const tenant = await pooledTenant([{ key: up }, { key: down }]);
    const outage = await fetch(`${fakeUrl()}/_fake/outage`, { method: "POST", body: JSON.stringify({ key: down, ms: 600_000 }) });
    expect(outage.status).toBe(204);
    const tag = uniqueTag("pool-down");
    const created = await call(base(), "POST", "/v1/map", { token: tenant.key, body: mapJob(tag, 60, { concurrency: 4, max_retries: 5 }) });
    const job = await waitForJob(base(), tenant.key, created.body.job_id);
    expect(job).toMatchObject({ status: "completed", succeeded: 60, failed: 0 });
    expect(job.models[0].deployments).toEqual([
      { deployment: 1, circuit: "closed" },
      { deployment: 2, circuit: expect.stringMatching(/^(open|half_open)$/) }, // half open once its 30 s cool-down is over
    ]);
    expect(job.models[0].circuit).toBe("closed"); // the model is out only when every deployment is
    const counts = await callsByKey(tag);
    // The down deployment met calls until its circuit opened (3 outages, and at most 3 more already under way), then
    // none but a probe per 30 s cool-down (none, unless a loaded machine takes that long over 60 items).
    expect(counts.get(down) ?? 0).toBeGreaterThanOrEqual(3);
    expect(counts.get(down) ?? 0).toBeLessThanOrEqual(3 + 3 + 2);
    expect(counts.get(up)).toBe(60);
    const listed = await call(base(), "GET", "/v1/providers", { token: tenant.key });
    const pool = listed.body.providers.find((p: { provider: string }) => p.provider === "openai");
    expect(pool.deployments).toMatchObject([
      { key_last4: up.slice(-4), weight: 1, circuit: "closed" },
      { key_last4: down.slice(-4), weight: 1, circuit: expect.stringMatching(/^(open|half_open)$/), circuit_model: "openai/gpt-6-luna" },
    ]);
    expect(JSON.stringify(listed.body)).not.toContain(down);
  });

  it("paces each deployment by its own declared limits: the job view shows each one's", async () => {
    const tenant = await pooledTenant([
      { key: `sk-${uniqueTag("paced-a")}`, rate_limits: { "*": { rpm: 6_000 } } },
      { key: `sk-${uniqueTag("paced-b")}`, rate_limits: { "*": { rpm: 3_000 } } },
    ]);
    const tag = uniqueTag("pool-paced");
    const job = await waitForJob(base(), tenant.key, (await call(base(), "POST", "/v1/map", { token: tenant.key, body: mapJob(tag, 20) })).body.job_id);
    expect(job).toMatchObject({ status: "completed", succeeded: 20 });
    expect(job.pacing).toMatchObject({ rpm: 6_000, source: "declared" });
    expect(job.pacing.models["openai/gpt-6-luna [deployment 2]"]).toMatchObject({ rpm: 3_000, source: "declared" });
  });
});
