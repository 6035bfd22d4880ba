/**
 * `@modelcontextprotocol/server-everything` (the MCP project's reference server, which nobody here
 * wrote) over Streamable HTTP, as a child process on a free port: its tools declare output schemas
 * and return structured content, as real servers do.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createRequire } from "node:module";
import { freePort } from "./fanout-server.ts";

export interface EverythingServer {
  url: string;
  close(): Promise<void>;
}

const START_TIMEOUT_MS = 20_000;

export async function startEverythingServer(): Promise<EverythingServer> {
  const entry = createRequire(import.meta.url)
    .resolve("@modelcontextprotocol/server-everything/package.json")
    .replace(/package\.json$/, "dist/index.js");
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [entry, "streamableHttp"], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let log = "";
  child.stderr?.on("data", (chunk: Buffer) => (log += chunk.toString()));
  // Ready when it says it listens (its own line), or failed when it exits first.
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server-everything did not start within ${START_TIMEOUT_MS} ms: ${log}`)), START_TIMEOUT_MS);
    child.stderr?.on("data", () => {
      if (/listening on port/i.test(log)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`server-everything exited (${code}): ${log}`));
    });
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}
