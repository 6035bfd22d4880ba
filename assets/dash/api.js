// @ts-check
/**
 * The dashboard's view of the API: the API key (this tab's sessionStorage, and this device's
 * localStorage only when the user asks to be remembered: never a URL or a cookie),
 * JSON calls with the bearer token, the contract's error envelope, and a job's Server-Sent Events
 * read through fetch (EventSource cannot send a bearer token), resumed with Last-Event-ID.
 */

const KEY = "fanout.apiKey";

export function apiKey() {
  return sessionStorage.getItem(KEY) ?? localStorage.getItem(KEY);
}

/** The key for this tab; with `remember` (the user's opt-in), also for this device's later tabs (localStorage). @param {string} key @param {boolean} remember */
export function signIn(key, remember = false) {
  sessionStorage.setItem(KEY, key);
  if (remember) localStorage.setItem(KEY, key);
  else localStorage.removeItem(KEY);
}

/** Forgets the key in this tab and on this device. */
export function signOut() {
  sessionStorage.removeItem(KEY);
  localStorage.removeItem(KEY);
}

export class ApiError extends Error {
  /** @param {number} status @param {string} code @param {string} message @param {unknown} details */
  constructor(status, code, message, details) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

/**
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body]
 * @param {string | null} [key] the key to use (default: the signed-in one)
 * @returns {Promise<any>}
 */
export async function api(method, path, body, key = apiKey()) {
  /** @type {Record<string, string>} */
  const headers = { accept: "application/json" };
  if (key) headers.authorization = `Bearer ${key}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  const parsed = text ? safeJson(text) : null;
  if (!res.ok) {
    const err = parsed && typeof parsed === "object" && "error" in parsed ? /** @type {any} */ (parsed).error : null;
    throw new ApiError(res.status, err?.code ?? "http_error", err?.message ?? `The server answered ${res.status}.`, err?.details ?? null);
  }
  return parsed;
}

/** @param {string} text */
function safeJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** A job in one of these has ended: its stream has nothing more to say. */
export const ENDED_STATUSES = new Set(["completed", "failed", "cancelled"]);

/**
 * Follows a job's event stream until it closes after the job ends, or `signal` aborts.
 * Reconnects with Last-Event-ID after a dropped connection, backing off up to 10 s.
 * @param {string} jobId
 * @param {(event: { id: number, name: string, data: any }) => void} onEvent
 * @param {AbortSignal} signal
 * @param {(state: "live" | "reconnecting" | "ended") => void} onState
 * @param {number} [fromId] the last event already seen (0: from the start)
 * @returns {Promise<number>} the last event's id
 */
export async function followEvents(jobId, onEvent, signal, onState, fromId = 0) {
  let lastId = fromId;
  let delay = 500;
  while (!signal.aborted) {
    try {
      /** @type {Record<string, string>} */
      const headers = { authorization: `Bearer ${apiKey()}`, accept: "text/event-stream" };
      if (lastId > 0) headers["last-event-id"] = String(lastId);
      const res = await fetch(`/v1/jobs/${encodeURIComponent(jobId)}/events`, { headers, signal });
      if (!res.ok || !res.body) throw new ApiError(res.status, "stream", `The event stream answered ${res.status}.`, null);
      onState("live");
      let received = 0;
      const ended = await readStream(res.body, (event) => {
        received++;
        lastId = event.id;
        onEvent(event);
      });
      if (ended) {
        onState("ended");
        return lastId;
      }
      // A stream that closed without the end event: a dropped connection, or a job that had already
      // ended before we asked (Last-Event-ID past its end: nothing to replay). Ask the job; only a
      // connection that brought events resets the back-off.
      if (received > 0) delay = 500;
      else if (ENDED_STATUSES.has((await api("GET", `/v1/jobs/${encodeURIComponent(jobId)}`)).status)) {
        onState("ended");
        return lastId;
      }
    } catch (err) {
      if (signal.aborted) return lastId;
      if (err instanceof ApiError && err.status >= 400 && err.status < 500) throw err;
    }
    onState("reconnecting");
    await new Promise((resolve) => setTimeout(resolve, delay));
    delay = Math.min(delay * 2, 10_000);
  }
  return lastId;
}

/**
 * Parses SSE frames; returns true when the stream closed after the job's end event.
 * @param {ReadableStream<Uint8Array>} body
 * @param {(event: { id: number, name: string, data: any }) => void} onEvent
 */
async function readStream(body, onEvent) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let sawEnd = false;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return sawEnd;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf("\n\n")) !== -1) {
      const frame = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const event = parseFrame(frame);
      if (!event) continue;
      onEvent(event);
      if (event.name === "MAP_COMPLETED") sawEnd = true;
    }
  }
}

/** @param {string} frame */
function parseFrame(frame) {
  let id = 0;
  let name = "message";
  const data = [];
  for (const line of frame.split("\n")) {
    if (line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "id") id = Number(value);
    else if (field === "event") name = value;
    else if (field === "data") data.push(value);
  }
  if (data.length === 0) return null;
  return { id, name, data: safeJson(data.join("\n")) };
}
