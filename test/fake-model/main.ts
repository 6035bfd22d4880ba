/**
 * The fake model server as a process of its own, for the e2e suite (global-setup.ts): it prints
 * `{"url": …}` once it listens and serves until it is killed. Apart from vitest's main process, so
 * the times it records and the rate windows it enforces do not stall while that process
 * transforms test files or reports. Run with Node's type stripping, as `npm start` loads it.
 */
import { startFakeModelServer } from "./server.ts";

const server = await startFakeModelServer({});
process.stdout.write(`${JSON.stringify({ url: server.url })}\n`);
// The parent holds our stdin: when it ends (the parent exited, even without a teardown), so do we.
process.stdin.resume();
process.stdin.on("end", () => process.exit(0));
