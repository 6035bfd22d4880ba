/** The job's event streams (durable-objects/coordinator/event-hub.ts): events in few chunks, none late when the job is quiet, none lost or repeated. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { EventHub, FLUSH_EVERY_MS } from "../../../durable-objects/coordinator/event-hub";
import type { StoredEvent } from "../../../durable-objects/coordinator/event-store";

const event = (id: number): StoredEvent => ({ id, name: "TASK_COMPLETED", data: JSON.stringify({ index: id }) });
const text = (e: StoredEvent) => `id: ${e.id}\nevent: ${e.name}\ndata: ${e.data}\n\n`;
const RETRY = "retry: 1000\n\n";
const decoder = new TextDecoder();

/** Reads a stream's chunks until it ends (or, with `count`, until that many chunks came). */
async function chunks(response: Response, count = Infinity): Promise<string[]> {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const out: string[] = [];
  while (out.length < count) {
    const { done, value } = await reader.read();
    if (done) break;
    out.push(decoder.decode(value));
  }
  reader.releaseLock();
  return out;
}

const turn = () => new Promise((resolve) => setTimeout(resolve, 0));

const microtasks = async () => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

describe("event hub", () => {
  afterEach(() => vi.useRealTimers());

  it("writes the events published in one turn as one chunk, in order", async () => {
    const hub = new EventHub(60_000);
    const stream = hub.open([], false);
    const first = chunks(stream, 2);
    hub.publish(event(1));
    hub.publish(event(2));
    hub.publish(event(3));
    expect(await first).toEqual([RETRY, text(event(1)) + text(event(2)) + text(event(3))]);
    hub.closeAll();
  });

  it("sends at most one chunk per flush interval, and an event after a quiet spell at once", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    const hub = new EventHub(60_000);
    const reader = (hub.open([], false).body as ReadableStream<Uint8Array>).getReader();
    const next = async () => decoder.decode((await reader.read()).value);
    expect(await next()).toBe(RETRY);
    hub.publish(event(1));
    expect(await next()).toBe(text(event(1))); // the first: at the end of its turn
    vi.advanceTimersByTime(5);
    hub.publish(event(2));
    vi.advanceTimersByTime(5);
    hub.publish(event(3));
    let got: string | null = null;
    const later = next().then((chunk) => (got = chunk));
    await microtasks();
    expect(got).toBeNull(); // within the interval of the last chunk: they wait
    vi.advanceTimersByTime(FLUSH_EVERY_MS - 10);
    await later;
    expect(got).toBe(text(event(2)) + text(event(3)));
    vi.advanceTimersByTime(10 * FLUSH_EVERY_MS);
    hub.publish(event(4));
    expect(await next()).toBe(text(event(4))); // no timer advanced: it went at once
    hub.closeAll();
  });

  it("gives a stream opened mid-turn the buffered events once, from its backlog, and the streams before it from the buffer", async () => {
    const hub = new EventHub(60_000);
    const early = hub.open([], false);
    hub.publish(event(1));
    hub.publish(event(2)); // stored, not yet written
    const late = hub.open([event(1), event(2)], false); // its backlog is read from the stored log
    hub.publish(event(3));
    await turn();
    hub.closeAll();
    expect((await chunks(early)).join("")).toBe(RETRY + text(event(1)) + text(event(2)) + text(event(3)));
    expect((await chunks(late)).join("")).toBe(RETRY + text(event(1)) + text(event(2)) + text(event(3)));
  });

  it("writes what is buffered before it closes the streams", async () => {
    const hub = new EventHub(60_000);
    const stream = hub.open([], false);
    hub.publish(event(1));
    hub.publish(event(2));
    hub.closeAll(); // the job's last event and the close in one turn
    expect((await chunks(stream)).join("")).toBe(RETRY + text(event(1)) + text(event(2)));
    expect(hub.size).toBe(0);
  });

  it("keeps nothing for no one: a reader that comes later replays the stored log", async () => {
    const hub = new EventHub(60_000);
    hub.publish(event(1));
    await turn();
    const stream = hub.open([event(1)], true);
    expect((await chunks(stream)).join("")).toBe(RETRY + text(event(1)));
  });
});
