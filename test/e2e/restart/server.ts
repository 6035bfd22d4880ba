/**
 * One Fanout server that the restart tests kill (SIGKILL: no chance to clean up) and start again
 * on the same local state, with every scenario's job under way at each kill. A scenario holds its
 * job where the kill must find it at a gate of the fake model (`gate=` in its prompts), so no
 * scenario races another's clock; after the restart its gates open and the job goes on.
 */
import { fakeStats, fakeUrl } from "../harness/context.ts";
export { openGate } from "../harness/context.ts";
import { startFanout, type FanoutServer } from "../harness/fanout-server.ts";

export interface Restart {
  killed: number; // when the server was killed
  up: number; // when it answered again
}

export interface Scenario {
  name: string;
  /** Submits the scenario's job; resolves once the job is held where the kill must find it. */
  arm(url: string): Promise<void>;
  /** After the restart: lets the job go on (opens its gates). */
  release?(): Promise<void>;
  /** After the restart: the job ends as an uninterrupted run would (a scenario killed again is checked after the last restart). */
  check?(url: string, restart: Restart): Promise<void>;
}

export class RestartedServer {
  #server: FanoutServer | undefined;

  get url(): string {
    if (!this.#server) throw new Error("the server is not running");
    return this.#server.url;
  }

  async start(): Promise<void> {
    this.#server = await startFanout({ vars: this.#vars() });
  }

  /** Arms the scenarios together, then each of `last` in turn (scenarios with a clock of their own: they arm once the others wait), kills the server, starts it again and releases them all. */
  async restartWith(scenarios: Scenario[], last: Scenario[] = []): Promise<Restart> {
    const server = this.#server as FanoutServer;
    await Promise.all(scenarios.map((s) => named(s, s.arm(server.url))));
    for (const s of last) await named(s, s.arm(server.url));
    await server.stop("SIGKILL");
    const killed = Date.now();
    this.#server = await startFanout({ vars: this.#vars(), persistDir: server.persistDir, port: server.port });
    const up = Date.now();
    await Promise.all([...scenarios, ...last].map((s) => s.release?.()));
    return { killed, up };
  }

  async stop(): Promise<void> {
    await this.#server?.stop();
  }

  #vars(): Record<string, string> {
    // A webhook's retry 3 s after a failed delivery: killed before it, the restart must deliver it.
    return { OPENAI_BASE_URL: `${fakeUrl()}/v1`, OPENAI_API_KEY: "sk-env-openai-key", WEBHOOK_RETRY_SCHEDULE_SECS: "3", BATCH_POLL_MS: "200" };
  }
}

async function named(scenario: Scenario, armed: Promise<void>): Promise<void> {
  try {
    await armed;
  } catch (err) {
    throw new Error(`scenario "${scenario.name}" could not be armed: ${String(err)}`, { cause: err });
  }
}

/** Polls `ok` until it holds (every 50 ms, up to `timeoutMs`): the value it returned. */
export async function until<T>(what: string, ok: () => Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await ok();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`never happened: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Whether at least `n` calls of `tag` wait at its gate. */
export const held = async (tag: string, n = 1): Promise<boolean> => (await fakeStats(tag)).held >= n;
