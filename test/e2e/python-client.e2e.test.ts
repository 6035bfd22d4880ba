/** The Python client (clients/python, standard library only) against the test server: its own unittest suite, run with python3. */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { newTenant } from "./harness/api.ts";
import { base, uniqueTag } from "./harness/context.ts";
import { ROOT } from "./harness/fanout-server.ts";

describe("the Python client", () => {
  it("passes its tests: map, run_all, pydantic schemas, event resume, the v2 operators, typed errors, delete", async () => {
    const { key } = await newTenant(base());
    const result = spawnSync("python3", ["-m", "unittest", "discover", "-s", "tests", "-v"], {
      cwd: join(ROOT, "clients/python"),
      encoding: "utf8",
      env: { ...process.env, FANOUT_URL: base(), FANOUT_API_KEY: key, FAKE_TAG: uniqueTag("py"), PYTHONDONTWRITEBYTECODE: "1" },
      timeout: 120_000,
    });
    expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(result.stderr).toMatch(/Ran 6 tests/);
    expect(result.stderr).toMatch(/\nOK/);
  }, 150_000);
});
