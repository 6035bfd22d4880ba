/** Runs the built `fanout` bin (client/dist/cli.js) with only the given environment. */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { ROOT } from "./fanout-server.ts";

export function fanoutCli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, "client/dist/cli.js"), ...args], { env: { PATH: process.env.PATH ?? "", ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("exit", (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}
