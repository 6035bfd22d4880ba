/** Restart scenarios of agents, adaptive concurrency and webhooks (../restart.e2e.test.ts). */
import { expect } from "vitest";
import { allResults, call, fake, newTenant, openEvents, readSse, waitForJob, type SseEvent } from "../harness/api.ts";
import { fakeStats, scriptedMap, uniqueTag } from "../harness/context.ts";
import { ownKeyTenant } from "../harness/limited-key.ts";
import { startReceiver, type Receiver } from "../harness/webhook-receiver.ts";
import { HELD_TIMEOUT_SECS } from "./jobs.ts";
import { held, openGate, until, type Scenario } from "./server.ts";

/** The job's first session id once it has at least `turns` turns stored. */
async function sessionWithTurns(url: string, key: string, jobId: string, turns: number): Promise<string | undefined> {
  const session = (await call(url, "GET", `/v1/jobs/${jobId}/sessions`, { token: key })).body?.sessions?.[0];
  return session && session.turns >= turns ? session.session_id : undefined;
}

/** A session killed mid-run resumes from its stored history: the prompt is not sent again as a new session, no turn is lost. */
export function sessionResumes(): Scenario {
  const tag = uniqueTag("agent-restart");
  let key = "";
  let jobId = "";
  let sessionId = "";
  return {
    name: "an agent session resumes from its stored history",
    async arm(url) {
      ({ key } = await newTenant(url));
      const body = {
        inputs: [{ d: fake(tag, 0, "text:step", 50).replace(">>", " gate=2>>") }],
        agent_prompt_template: "Work on it {{ item.d }}",
        model: "openai/gpt-6-luna",
        continuation_message: "Next.",
        max_turns: 8,
        timeout_secs: HELD_TIMEOUT_SECS,
      };
      jobId = (await call(url, "POST", "/v1/agentic-map", { token: key, body })).body.job_id;
      sessionId = await until("two turns stored, the third held", async () => (await held(tag)) && sessionWithTurns(url, key, jobId, 2));
      expect((await call(url, "GET", `/v1/jobs/${jobId}`, { token: key })).body.status).toBe("running");
    },
    release: () => openGate(tag),
    async check(url) {
      const job = await waitForJob(url, key, jobId, 90_000);
      expect(job).toMatchObject({ status: "completed", succeeded: 1 });
      const [result] = await allResults(url, key, jobId);
      expect(result).toMatchObject({ session_id: sessionId, stop_reason: "max_turns", turns: 8 });
      const session = (await call(url, "GET", `/v1/sessions/${sessionId}`, { token: key })).body;
      expect(session.messages).toHaveLength(1 + 8 + 7);
      expect(session.messages.filter((m: any) => m.content.startsWith("Work on it"))).toHaveLength(1);
    },
  };
}

const spawn = (description: string) => `spawn:${encodeURIComponent(JSON.stringify({ description, inputs: {} }))}`;

/** Killed while a child sub-session's call is under way: both finish, the spawning turn is not repeated, one child. */
export function subtaskFinishes(): Scenario {
  const [tp, tc] = [uniqueTag("parent"), uniqueTag("child")];
  let key = "";
  let jobId = "";
  return {
    name: "an agent's subtask killed while its child runs",
    async arm(url) {
      ({ key } = await newTenant(url));
      const child = `Child <<fake tag=${tc} id=c steps=text:child_answer ms=50 gate=0>>`;
      const body = {
        inputs: [`Root <<fake tag=${tp} id=p steps=${spawn(child)},text:root_done>>`],
        agent_prompt_template: "{{ item }}",
        model: "openai/gpt-6-luna",
        subtasks: {},
        timeout_secs: HELD_TIMEOUT_SECS,
      };
      jobId = (await call(url, "POST", "/v1/agentic-map", { token: key, body })).body.job_id;
      await until("the child's call held", () => held(tc));
    },
    release: () => openGate(tc),
    async check(url) {
      const job = await waitForJob(url, key, jobId, 90_000);
      expect(job).toMatchObject({ status: "completed", succeeded: 1 });
      const [result] = await allResults(url, key, jobId);
      expect(result).toMatchObject({ success: true, output_text: "root done", turns: 2 });
      const root = (await call(url, "GET", `/v1/sessions/${result.session_id}`, { token: key })).body;
      expect(root.children).toHaveLength(1);
      expect(root.messages.find((m: any) => m.role === "tool").content).toBe("child answer");
      expect((await fakeStats(tp)).requests).toBe(2); // the spawning turn and the last: none again
      expect((await fakeStats(tc)).requests).toBe(2); // the interrupted call, once more
      expect(await allResults(url, key, jobId, "&stage=items.subtasks")).toHaveLength(1);
    },
  };
}

// Adaptive concurrency: what was learned about the provider's room is in storage, not only in memory.
const CONCURRENCY = 16; // not over 16: the first round is not paced, so it learns the provider's room at once
const ROOM = 4;
const N = 40;

const adaptiveBody = (tag: string) => ({
  inputs: Array.from({ length: N }, (_, i) => `item ${i} <<fake tag=${tag} id=${i} cap=${ROOM} ms=300>>`),
  prompt_template: "{{ item }}",
  model: "openai-compatible/gpt-6-luna", // no rate-limit headers, no probe of a fresh key: adaptive concurrency alone
  concurrency: CONCURRENCY,
  max_retries: 10,
  timeout_secs: HELD_TIMEOUT_SECS,
});

/** The calls that reached the provider within 200 ms of the first one after `since` (each call takes 300 ms; a throttled one is retried after 1 s). */
async function firstBurstAfter(tag: string, since: number): Promise<number> {
  const after = (await fakeStats(tag)).times.filter((t) => t >= since);
  expect(after.length).toBeGreaterThan(0);
  return after.filter((t) => t < (after[0] as number) + 200).length;
}

/** A cut to at most half the job's concurrency (on a loaded machine the first round may reach the provider spread out, and fewer calls are throttled). */
const limited = (e: SseEvent) => e.event === "CONCURRENCY_CHANGED" && e.data.effective_concurrency <= CONCURRENCY / 2;

/** A job killed under a learned limit goes on under it, and loses nothing: forgotten, it would send 16 calls at once. */
export function learnedLimitKept(): Scenario {
  const tag = uniqueTag("cap-restart");
  let key = "";
  let jobId = "";
  let limit = 0;
  return {
    name: "a job killed under a learned limit goes on under it",
    async arm(url) {
      ({ key } = await ownKeyTenant(url)); // the limit is its key's: not the other scenarios'
      const created = await call(url, "POST", "/v1/map", { token: key, body: adaptiveBody(tag) });
      expect(created.status).toBe(202);
      jobId = created.body.job_id;
      // The first round of 16 meets room for 4: the cut comes with its throttled answers, long before any call ends.
      const seen = await readSse(await openEvents(url, key, jobId), { stopWhen: limited });
      expect(seen.at(-1)).toMatchObject({ event: "CONCURRENCY_CHANGED", data: { reason: "throttled" } });
      limit = seen.at(-1)?.data.effective_concurrency as number;
    },
    async check(url, restart) {
      const done = await waitForJob(url, key, jobId, 90_000);
      expect(done).toMatchObject({ status: "completed", total: N, succeeded: N, failed: 0 });
      const results = await allResults(url, key, jobId);
      expect(results.map((r) => r.index)).toEqual(Array.from({ length: N }, (_, i) => i));
      // The calls under way at the kill run again, and the waiting retries go out, within the limit
      // (or a step or two above it, grown by successes before the kill).
      expect(await firstBurstAfter(tag, restart.killed)).toBeLessThanOrEqual(limit + 2);
      const stats = await fakeStats(tag);
      expect(stats.requests - stats.throttled).toBeGreaterThanOrEqual(N);
    },
  };
}

/** The tenant's next job after a restart starts at the limit its key's ProviderLimiter kept in storage. */
export function nextJobStartsAtLimit(): Scenario {
  let key = "";
  return {
    name: "a tenant's next job after a restart starts at the learned limit",
    async arm(url) {
      ({ key } = await ownKeyTenant(url));
      const first = await call(url, "POST", "/v1/map", { token: key, body: adaptiveBody(uniqueTag("cap-learn")) });
      await waitForJob(url, key, first.body.job_id, 90_000);
    },
    async check(url, restart) {
      const tag = uniqueTag("cap-after");
      const created = await call(url, "POST", "/v1/map", { token: key, body: adaptiveBody(tag) });
      const done = await waitForJob(url, key, created.body.job_id, 90_000);
      expect(done).toMatchObject({ status: "completed", succeeded: N, failed: 0 });
      const changes = (await readSse(await openEvents(url, key, created.body.job_id))).filter((e) => e.event === "CONCURRENCY_CHANGED");
      expect(changes[0]?.data).toMatchObject({ reason: "shared" });
      expect(changes[0]?.data.effective_concurrency).toBeLessThanOrEqual(ROOM + 4);
      expect(await firstBurstAfter(tag, restart.killed)).toBeLessThanOrEqual(ROOM + 4);
    },
  };
}

/**
 * A webhook retry waits in the Queue when the server is killed (local queues lose delayed
 * messages on restart): the coordinator notices the overdue delivery and queues it again. Its
 * retry comes 3 s after the failed delivery, so it is armed last, right before the kill.
 */
export function webhookRetried(): Scenario & { close(): Promise<void> } {
  let receiver: Receiver | undefined;
  let key = "";
  let jobId = "";
  const deliveries = async (url: string) => (await call(url, "GET", `/v1/jobs/${jobId}/webhook-deliveries`, { token: key })).body.deliveries;
  return {
    name: "a webhook retry waiting in the Queue is delivered",
    async arm(url) {
      receiver = await startReceiver([500, 200]);
      ({ key } = await newTenant(url));
      const body = scriptedMap(uniqueTag("hook-restart"), ["ok"], { webhook: { url: receiver.url } });
      jobId = (await call(url, "POST", "/v1/map", { token: key, body })).body.job_id;
      await waitForJob(url, key, jobId);
      // Killed only once the 500 is on record: from then on a retry waits in the Queue.
      await until("the failed delivery on record", async () => (await deliveries(url))[0]?.attempts?.length === 1);
      expect(receiver.received).toHaveLength(1);
    },
    async check(url) {
      const delivery = await until(
        "the delivery made after the restart",
        async () => {
          const [first] = await deliveries(url);
          return first?.status === "delivered" && first;
        },
        75_000,
      );
      expect(delivery.attempts.map((a: any) => a.status_code)).toEqual([500, 200]);
      expect(receiver?.received).toHaveLength(2);
      expect(receiver?.received[1]?.headers["webhook-id"]).toBe(receiver?.received[0]?.headers["webhook-id"]);
    },
    close: async () => receiver?.close(),
  };
}
