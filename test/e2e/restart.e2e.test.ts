/**
 * The server is killed (SIGKILL, no chance to clean up) and started again on the same local
 * state, twice, with every kind of job under way at each kill (./restart/). Each scenario holds
 * its job at the fake model's gates where the kill must find it, so one pair of server starts
 * serves all of them; each checks after the restart that its job ended as an uninterrupted run
 * would: nothing lost, nothing finished run twice, and the calls under way run again at once.
 */
import { afterAll, beforeAll, describe, it } from "vitest";
import { learnedLimitKept, nextJobStartsAtLimit, sessionResumes, subtaskFinishes, webhookRetried } from "./restart/agents.ts";
import { foldEndsTheSame, mapLosesNothing, mapReduceRunsNothingTwice, mapRunsAgainAtOnce, pipelineKilledTwice } from "./restart/jobs.ts";
import { batchSurvivesKill, cascadeDecidesOnce, cascadeTargetSurvivesKill, embeddingBlockingSurvivesKill } from "./restart/semantic.ts";
import { RestartedServer, type Restart, type Scenario } from "./restart/server.ts";

const server = new RestartedServer();
const pipeline = pipelineKilledTwice();
const webhook = webhookRetried();
const first: Scenario[] = [
  mapLosesNothing(),
  mapRunsAgainAtOnce(),
  foldEndsTheSame(),
  mapReduceRunsNothingTwice(),
  pipeline.midBatch,
  sessionResumes(),
  subtaskFinishes(),
  cascadeDecidesOnce(),
  cascadeTargetSurvivesKill(),
  batchSurvivesKill(),
  embeddingBlockingSurvivesKill(),
];
// Armed last, in turn, right before the kill: a job under a learned limit (held at a gate, its calls would fill the
// provider's room and every other call would meet a 429 whatever the limit: adaptive concurrency would tolerate
// them and undo its cuts), then a webhook retry due 3 s after its failed delivery.
const last: Scenario[] = [learnedLimitKept(), webhook];
const second: Scenario[] = [pipeline.betweenSteps, nextJobStartsAtLimit()];
// Three server starts and every scenario's job: two minutes alone, more beside a second suite.
const STARTS_TIMEOUT_MS = 300_000;

afterAll(async () => {
  await server.stop();
  await webhook.close();
});

describe("a first restart with every kind of job under way", () => {
  let restart: Restart;
  beforeAll(async () => {
    await server.start();
    restart = await server.restartWith(first, last);
  }, STARTS_TIMEOUT_MS);
  for (const { name, check } of [...first, ...last]) if (check) it(name, () => check(server.url, restart), 120_000);
});

describe("a second restart", () => {
  let restart: Restart;
  beforeAll(async () => {
    restart = await server.restartWith(second);
  }, STARTS_TIMEOUT_MS);
  for (const { name, check } of second) if (check) it(name, () => check(server.url, restart), 120_000);
});
