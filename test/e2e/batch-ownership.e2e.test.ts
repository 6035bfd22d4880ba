/**
 * Provider batches owned end to end (#48): a batch is polled, read and cancelled only with the
 * credential that submitted it — a tenant that deletes or changes its credential mid-batch gets
 * those lines failed with a clear error, and the deployment's key is never used on its batch; an
 * id a submission answers is taken only if the provider's view of that batch is the submitted one;
 * a line an ended batch leaves out counts as an attempt (never resubmitted uncounted); execution
 * mode batch honours its deadline. Against the fake's batch APIs, which keep each batch to the key
 * that made it, as the real ones do.
 */
import { describe, expect, it } from "vitest";
import { allResults, call, waitForJob } from "./harness/api.ts";
import { base, fakeUrl, uniqueTag } from "./harness/context.ts";
import { ownKeyTenant } from "./harness/limited-key.ts";

type FakeBatch = { id: string; provider: string; requests: number; tags: (string | null)[]; cancelled: boolean; ended: boolean };
const fakeBatches = async (tag: string): Promise<FakeBatch[]> =>
  ((await (await fetch(`${fakeUrl()}/_fake/batches`)).json()) as FakeBatch[]).filter((b) => b.tags.includes(tag));

const job = (tag: string, lines: string[], extra: Record<string, unknown> = {}) => ({
  inputs: lines.map((directive, i) => `item ${i} <<fake tag=${tag} id=${i} ${directive}>>`),
  prompt_template: "{{ item }}",
  model: "openai/gpt-6-luna",
  execution: { mode: "batch" },
  ...extra,
});

async function submitted(key: string, jobId: string): Promise<void> {
  await expect
    .poll(async () => (await call(base(), "GET", `/v1/jobs/${jobId}`, { token: key })).body.batches?.[0]?.provider_batch_id ?? null, { timeout: 30_000 })
    .not.toBeNull();
}

describe("provider batches are the credential's that submitted them", () => {
  it.each([
    ["deleted", "DELETE", undefined],
    ["changed", "PUT", { api_key: "sk-rotated-key-0000" }],
  ])("a credential %s mid-batch fails the batch's lines with a clear error; the batch is never read with another key", async (_what, method, body) => {
    const tenant = await ownKeyTenant();
    const tag = uniqueTag("batch-owner");
    const created = await call(base(), "POST", "/v1/map", { token: tenant.key, body: job(tag, ["steps=ok batch_ms=600000"], { max_retries: 3 }) });
    expect(created.status).toBe(202);
    await submitted(tenant.key, created.body.job_id);
    const changed = await call(base(), method as "PUT" | "DELETE", "/v1/providers/openai", {
      token: tenant.key,
      body: body && { ...body, base_url: `${fakeUrl()}/v1` },
    });
    expect(changed.status).toBeLessThan(300);
    const done = await waitForJob(base(), tenant.key, created.body.job_id);
    expect(done).toMatchObject({ status: "completed", failed: 1, total_attempts: 1 });
    const [result] = await allResults(base(), tenant.key, created.body.job_id);
    expect(result).toMatchObject({
      success: false,
      error_kind: "llm_error",
      error: expect.stringMatching(/credential that submitted this line's batch was changed or deleted/),
    });
    expect(done.batches[0]).toMatchObject({ status: "failed" });
    const [batch] = await fakeBatches(tag);
    expect(batch?.ended).toBe(false); // nobody read it: the fake ends a batch when its own key looks at it after its time
  });

  it.each(["openai/gpt-6-luna", "anthropic/claude-haiku-4-5"])(
    "%s: a submission answered with another batch's id is refused, its lines counted and sent again",
    async (model) => {
      const tenant = await ownKeyTenant();
      const tag = uniqueTag("batch-lie");
      const created = await call(base(), "POST", "/v1/map", { token: tenant.key, body: job(tag, ["steps=ok batch_lie=1"], { model, max_retries: 1 }) });
      const done = await waitForJob(base(), tenant.key, created.body.job_id);
      expect(done).toMatchObject({ status: "completed", failed: 1, total_attempts: 2 });
      const [result] = await allResults(base(), tenant.key, created.body.job_id);
      expect(result).toMatchObject({
        success: false,
        error_kind: "llm_error",
        attempts: 2,
        error: expect.stringMatching(/whose metadata or count of lines is not the submitted batch's/),
      });
      expect(done.batches.map((b: { status: string }) => b.status)).toEqual(["failed", "failed"]);
    },
  );
});

describe("lines a batch leaves out, and the batch mode's deadline", () => {
  it.each(["openai/gpt-6-luna", "anthropic/claude-haiku-4-5"])(
    "%s: a line missing from an ended batch is an attempt: retried while max_retries allows, then failed, never resubmitted uncounted",
    async (model) => {
      const tenant = await ownKeyTenant();
      const tag = uniqueTag("batch-omit");
      const created = await call(base(), "POST", "/v1/map", {
        token: tenant.key,
        body: job(tag, ["steps=ok", "steps=ok batch_omit=1"], { model, max_retries: 1 }),
      });
      const done = await waitForJob(base(), tenant.key, created.body.job_id);
      expect(done).toMatchObject({ status: "completed", succeeded: 1, failed: 1, total_attempts: 3 });
      const failed = (await allResults(base(), tenant.key, created.body.job_id)).find((r) => !r.success);
      expect(failed).toMatchObject({ index: 1, error_kind: "llm_error", attempts: 2, error: "The provider's batch ended without a result for this line." });
      expect(await fakeBatches(tag)).toHaveLength(2); // the first batch, then one more for the missing line's retry
    },
  );

  it("a cancelled batch the provider never ends is polled no more after the wait (BATCH_CANCEL_WAIT_MS here, an hour by default)", async () => {
    const tenant = await ownKeyTenant();
    const tag = uniqueTag("batch-stuck");
    const created = await call(base(), "POST", "/v1/map", { token: tenant.key, body: job(tag, ["steps=ok batch_ms=600000 cancel_ms=600000"]) });
    await submitted(tenant.key, created.body.job_id);
    expect((await call(base(), "POST", `/v1/jobs/${created.body.job_id}/cancel`, { token: tenant.key })).status).toBe(202);
    await expect
      .poll(async () => (await call(base(), "GET", `/v1/jobs/${created.body.job_id}`, { token: tenant.key })).body.batches?.[0]?.status, { timeout: 30_000 })
      .toBe("failed");
    const [batch] = await fakeBatches(tag);
    expect(batch).toMatchObject({ cancelled: true, ended: false }); // still "cancelling" at the provider: we stopped asking
  });

  it("execution mode batch past its deadline_secs: the open batch is cancelled and the items without a result fail expired", async () => {
    const tenant = await ownKeyTenant();
    const tag = uniqueTag("batch-deadline");
    const created = await call(base(), "POST", "/v1/map", {
      token: tenant.key,
      body: job(tag, ["steps=ok batch_ms=600000", "steps=ok batch_ms=600000"], { execution: { mode: "batch", deadline_secs: 2 } }),
    });
    expect(created.status).toBe(202);
    const done = await waitForJob(base(), tenant.key, created.body.job_id);
    expect(done).toMatchObject({ status: "completed", failed: 2 });
    for (const result of await allResults(base(), tenant.key, created.body.job_id)) {
      expect(result).toMatchObject({
        success: false,
        error_kind: "expired",
        error: "The job's execution.deadline_secs (2) passed before this item's batch line ran.",
      });
    }
    const batches = await fakeBatches(tag);
    expect(batches).toHaveLength(1);
    expect(batches[0]?.cancelled).toBe(true);
  });
});
