import { defineConfig } from "vitest/config";
import { SlowFirst } from "./test/e2e/harness/sequencer.ts";

export default defineConfig({
  test: {
    name: "e2e",
    include: ["test/e2e/**/*.e2e.test.ts", "test/hostile/**/*.e2e.test.ts"],
    globalSetup: ["./test/e2e/global-setup.ts"],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    maxWorkers: 2,
    sequence: { sequencer: SlowFirst },
    // expect.poll waits for a state the server or the browser reaches eventually: 1 s (vitest's
    // default) is short on a loaded 2-core machine. A poll given its own timeout keeps it.
    expect: { poll: { timeout: 10_000 } },
  },
});
