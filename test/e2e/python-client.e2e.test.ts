/** The Python client (clients/python, standard library only) against the test server: its own unittest suite, run with python3. */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { newTenant } from "./harness/api.ts";
import { base, uniqueTag } from "./harness/context.ts";
import { ROOT } from "./harness/fanout-server.ts";

describe("the Python client", () => {
  it("passes its tests: map, run_all, pydantic schemas, event resume, the v2 operators, filter and classify, evaluations, batch mode and cost, typed errors, delete", async () => {
    const { key } = await newTenant(base());
    const result = spawnSync("python3", ["-m", "unittest", "discover", "-s", "tests", "-v"], {
      cwd: join(ROOT, "clients/python"),
      encoding: "utf8",
      env: { ...process.env, FANOUT_URL: base(), FANOUT_API_KEY: key, FAKE_TAG: uniqueTag("py"), PYTHONDONTWRITEBYTECODE: "1" },
      timeout: 120_000,
    });
    expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(result.stderr).toMatch(/Ran 9 tests/);
    expect(result.stderr).toMatch(/\nOK/);
  }, 150_000);

  it("leaves nothing for git to show after a build (its outputs are ignored)", () => {
    const outputs = ["build/lib/fanout/__init__.py", "fanout_client.egg-info/PKG-INFO", ".pytest_cache/README.md", "fanout/__pycache__/x.pyc"].map(
      (p) => `clients/python/${p}`,
    );
    const check = spawnSync("git", ["check-ignore", "--no-index", ...outputs], { cwd: ROOT, encoding: "utf8" });
    if (check.status === 128) {
      // Not a git checkout (a copied tree): the patterns themselves must be there.
      const ignore = readFileSync(join(ROOT, ".gitignore"), "utf8").split("\n");
      for (const pattern of ["build/", "*.egg-info/", ".pytest_cache/", "__pycache__/"]) expect(ignore).toContain(pattern);
      return;
    }
    expect(check.stdout.trim().split("\n")).toEqual(outputs);
  });
});
