/**
 * An evaluation's submission inside the runtime, against the real D1: the items it reads from the
 * evaluated job go to the coordinator in one call, so together they are held to the deployment's
 * request size (413, nothing stored) — a sample of large results cannot make an oversized job.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { submitEvaluationJob } from "../../src/operators/evaluation/submit";
import { EvaluationRequestSchema } from "../../src/operators/evaluation/schema";
import { ApiError } from "../../src/lib/errors";
import { countRows, insertFinishedJob, tenantWithKey } from "./helpers";

describe("an evaluation's submission", () => {
  it("refuses evaluated items over the deployment's request size with 413, storing nothing", async () => {
    const { tenantId } = await tenantWithKey();
    const jobId = `job_${crypto.randomUUID().replaceAll("-", "")}`;
    await insertFinishedJob(tenantId, jobId);
    const body = EvaluationRequestSchema.parse({ job_id: jobId, gold: [{ index: 0, expected: "b" }] });
    const before = await countRows("jobs");
    const small = { ...env, MAX_REQUEST_BYTES: "40" } as Env;
    const refused = await submitEvaluationJob(small, tenantId, body, null, true).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ status: 413, code: "payload_too_large", details: [{ path: "gold" }] });
    expect((refused as ApiError).message).toContain("take a smaller sample or fewer gold labels");
    expect(await countRows("jobs")).toBe(before);
    // The same evaluation within the size: its dry run answers.
    const answer = await submitEvaluationJob({ ...env, OPENAI_API_KEY: "sk-test" } as Env, tenantId, body, null, true);
    expect("dryRun" in answer && answer.dryRun.calls).toBe(0); // gold alone: no call
  });
});
