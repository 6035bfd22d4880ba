/** What the pipeline e2e files share: the model, a scripted step's JSON output, and submitting a pipeline (run to its end, or refused). */
import { expect } from "vitest";
import { call, waitForJob } from "./api.ts";
import { base } from "./context.ts";

export const MODEL = "openai/gpt-6-luna";
export const json = (value: unknown) => `json:${encodeURIComponent(JSON.stringify(value))}`;
export const FILES_SCHEMA = { type: "object", properties: { files: { type: "array" } }, required: ["files"] };

export async function run(key: string, body: Record<string, unknown>) {
  const created = await call(base(), "POST", "/v1/pipelines", { token: key, body: { model: MODEL, concurrency: 8, ...body } });
  expect(created.status, JSON.stringify(created.body)).toBe(202);
  return waitForJob(base(), key, created.body.job_id);
}

export async function refused(key: string, body: Record<string, unknown>) {
  const answer = await call(base(), "POST", "/v1/pipelines", { token: key, body: { model: MODEL, ...body } });
  expect(answer.status).toBe(400);
  return answer.body.error;
}
