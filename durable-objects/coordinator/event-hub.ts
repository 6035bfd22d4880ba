/**
 * Server-Sent Events for one job: replay from the stored log, then live events to every open
 * stream, a keepalive comment so proxies do not cut idle streams, and close after MAP_COMPLETED.
 *
 * Events go out in chunks, at most one per FLUSH_EVERY_MS: an event published when none went out
 * in that time is written at the end of its turn (a microtask; the turn's other events with it),
 * later ones wait in a buffer for the next flush. Each chunk crosses every hop from this object to
 * the client, and a chunk per event cost ~0.3 ms of server CPU per item on S2 (BENCHMARKS.md, "The
 * hot path against the durability floor"); the stream's bytes are the same, a live event is at
 * most FLUSH_EVERY_MS late, and a quiet job's next event is not late at all.
 */
import { microtask } from "../../src/lib/microtask";
import type { StoredEvent } from "./event-store";

export const DEFAULT_KEEPALIVE_MS = 15_000; // the contract asks for one at least every 20 s; proxies cut idle streams
export const FLUSH_EVERY_MS = 25;

const encoder = new TextEncoder();

const eventText = (event: StoredEvent): string => `id: ${event.id}\nevent: ${event.name}\ndata: ${event.data}\n\n`;

export function formatEvent(event: StoredEvent): Uint8Array {
  return encoder.encode(eventText(event));
}

export class EventHub {
  readonly #subscribers = new Set<WritableStreamDefaultWriter<Uint8Array>>();
  #pending: string[] = []; // formatted events published, not yet written: a flush is scheduled while there are any
  #timer: ReturnType<typeof setTimeout> | null = null;
  #flushedAt = -Infinity; // when the last chunk of events went out
  #keepalive: ReturnType<typeof setInterval> | null = null;
  readonly #keepaliveMs: number;

  constructor(keepaliveMs = DEFAULT_KEEPALIVE_MS) {
    this.#keepaliveMs = keepaliveMs;
  }

  /**
   * A stream that first replays `backlog`; it stays open for live events unless `finished`. The
   * backlog is read from the stored log, which holds the events still in the buffer: they go to the
   * streams open before, and not again to this one.
   */
  open(backlog: StoredEvent[], finished: boolean): Response {
    this.#flush();
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
    const writer = writable.getWriter();
    void writer.write(encoder.encode("retry: 1000\n\n")).catch(() => undefined);
    for (const event of backlog) void writer.write(formatEvent(event)).catch(() => undefined);
    if (finished) void writer.close().catch(() => undefined);
    else this.#add(writer);
    return new Response(readable, {
      headers: {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-cache, no-transform",
        "x-accel-buffering": "no",
      },
    });
  }

  publish(event: StoredEvent): void {
    if (this.#subscribers.size === 0) return; // a reader that comes later replays it from the stored log
    if (this.#pending.push(eventText(event)) > 1) return; // the flush scheduled for the first takes it
    const wait = this.#flushedAt + FLUSH_EVERY_MS - Date.now();
    if (wait <= 0) microtask(() => this.#flush());
    else this.#timer = setTimeout(() => this.#flush(), wait);
  }

  closeAll(): void {
    this.#flush();
    for (const writer of this.#subscribers) void writer.close().catch(() => undefined);
    this.#subscribers.clear();
    this.#stopKeepalive();
  }

  get size(): number {
    return this.#subscribers.size;
  }

  #add(writer: WritableStreamDefaultWriter<Uint8Array>): void {
    this.#subscribers.add(writer);
    void writer.closed.catch(() => undefined).finally(() => this.#drop(writer));
    this.#keepalive ??= setInterval(() => this.#broadcast(encoder.encode(": keepalive\n\n")), this.#keepaliveMs);
  }

  /** Writes the turn's events, as one chunk, to every stream open. */
  #flush(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    if (this.#pending.length === 0) return;
    this.#flushedAt = Date.now();
    const chunk = encoder.encode(this.#pending.join(""));
    this.#pending = [];
    this.#broadcast(chunk);
  }

  #broadcast(chunk: Uint8Array): void {
    for (const writer of this.#subscribers) {
      writer.write(chunk).catch(() => this.#drop(writer));
    }
  }

  #drop(writer: WritableStreamDefaultWriter<Uint8Array>): void {
    this.#subscribers.delete(writer);
    if (this.#subscribers.size === 0) this.#stopKeepalive();
  }

  #stopKeepalive(): void {
    if (this.#keepalive !== null) clearInterval(this.#keepalive);
    this.#keepalive = null;
  }
}
