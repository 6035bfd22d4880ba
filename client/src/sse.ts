/**
 * Reads a job's Server-Sent Events and reconnects when the connection drops, sending
 * `Last-Event-ID` so the server replays exactly what was missed: no loss, no repeats.
 */
export interface SseEvent {
  id: number;
  event: string;
  data: unknown;
}

export interface StreamOptions {
  open: (lastEventId: number) => Promise<Response>;
  /**
   * The stream's last event: the server closes the stream after it. A job that was recovered has
   * it more than once (one per round), so the stream is done only when the server closes right
   * after one; events after it mean the job went on.
   */
  until: string;
  /** Only the events after this id (default 0: from the start). */
  after?: number;
  maxReconnects?: number;
  reconnectDelayMs?: number;
}

async function* parse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let split: number;
      while ((split = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, split);
        buffer = buffer.slice(split + 2);
        let id: number | null = null;
        let event = "message";
        const data: string[] = [];
        for (const line of block.split("\n")) {
          if (line.startsWith(":")) continue; // a comment (keepalive)
          const colon = line.indexOf(":");
          const field = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
          if (field === "id") id = Number(value);
          else if (field === "event") event = value;
          else if (field === "data") data.push(value);
        }
        if (id !== null && data.length > 0) yield { id, event, data: JSON.parse(data.join("\n")) as unknown };
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

export async function* eventStream(options: StreamOptions): AsyncGenerator<SseEvent> {
  let lastId = options.after ?? 0;
  let reconnects = 0;
  const max = options.maxReconnects ?? 10;
  for (;;) {
    let ended = false;
    try {
      const res = await options.open(lastId);
      if (!res.body) throw new Error("the event stream has no body");
      for await (const event of parse(res.body)) {
        if (event.id <= lastId) continue; // never repeat an event
        lastId = event.id;
        reconnects = 0;
        ended = event.event === options.until;
        yield event;
      }
    } catch (err) {
      if ((err as { name?: string }).name === "FanoutError") throw err; // an API answer, not a dropped line
      if (++reconnects > max) throw err;
    }
    if (ended) return;
    await new Promise((r) => setTimeout(r, options.reconnectDelayMs ?? 500));
  }
}
