/**
 * Temporary folders for tests and benchmarks: a Fanout server's local state (100+ MB once it has
 * run a job; a run of the suite starts dozens), a CLI's input files. A server's state goes when
 * the server is stopped, not when it is killed: the restart tests start a server again on the
 * state a killed one left. Test files remove their own folders with `removeTempDirs` after all.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const made = new Set<string>();

/** A new folder named `<prefix>XXXXXX` under `parent` (the system's temp folder unless given). */
export function tempDir(prefix: string, parent = tmpdir()): string {
  const dir = mkdtempSync(join(parent, prefix));
  made.add(dir);
  return dir;
}

/** Removes `dir` if `tempDir` made it in this process (a folder the caller chose stays). */
export function removeTempDir(dir: string): void {
  if (!made.delete(dir)) return;
  rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
}

/** Removes every folder `tempDir` made in this process. */
export function removeTempDirs(): void {
  for (const dir of [...made]) removeTempDir(dir);
}
