/**
 * The e2e files' order: the slowest first. On a fresh machine (CI) vitest has no durations on
 * record and starts the larger files first, so a short file that runs a minute (a fresh clone's
 * install, the server restarts) can start last and keep one worker busy after the other is done.
 */
import { BaseSequencer, type TestSpecification } from "vitest/node";

const SLOW_FIRST = ["fresh-clone", "restart", "dashboard", "webhooks", "pacing", "start", "cli", "rate-limits", "adaptive-concurrency"];

const rank = (file: TestSpecification): number => {
  const i = SLOW_FIRST.findIndex((name) => file.moduleId.endsWith(`/${name}.e2e.test.ts`));
  return i < 0 ? SLOW_FIRST.length : i;
};

export class SlowFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    return [...(await super.sort(files))].sort((a, b) => rank(a) - rank(b));
  }
}
