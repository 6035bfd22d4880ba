/**
 * Server-Sent Events for one job: replay from the stored log, then live events to every open
 * stream, a keepalive comment so proxies do not cut idle streams, and close after MAP_COMPLETED.
 */
import type { StoredEvent } from "./event-store";

export const DEFAULT_KEEPALIVE_MS = 15_000; // the contract asks for one at least every 20 s; proxies cut idle streams

const encoder = new TextEncoder();

export function formatEvent(event: StoredEvent): Uint8Array {
  return encoder.encode(`id: ${event.id}\nevent: ${event.name}\ndata: ${event.data}\n\n`);
}

export class EventHub {
  readonly #subscribers = new Set<WritableStreamDefaultWriter<Uint8Array>>();
  #keepalive: ReturnType<typeof setInterval> | null = null;
  readonly #keepaliveMs: number;

  constructor(keepaliveMs = DEFAULT_KEEPALIVE_MS) {
    this.#keepaliveMs = keepaliveMs;
  }

  /** A stream that first replays `backlog`; it stays open for live events unless `finished`. */
  open(backlog: StoredEvent[], finished: boolean): Response {
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
    this.#broadcast(formatEvent(event));
  }

  closeAll(): void {
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
