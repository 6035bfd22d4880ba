/**
 * The fake's outages: `POST /_fake/outage {"model", "ms"}` — every live call of that model (as the
 * request names it) answers a 500 for that long (benchmark S16's outage); `{"key", "ms"}` — every
 * live call with that API key (a pool's deployment that is down). The 500 is each provider's own.
 */
import type { IncomingMessage, ServerResponse } from "node:http";

type Json = Record<string, unknown>;

export class FakeOutages {
  readonly #until = new Map<string, number>(); // model, or `key:<API key>` → until when its live calls answer 500

  /** Answers the control request if it is one. */
  handle(req: IncomingMessage, res: ServerResponse, url: URL, readBody: () => Promise<string>): boolean {
    if (url.pathname !== "/_fake/outage" || req.method !== "POST") return false;
    void readBody().then((text) => {
      const { model, key, ms } = JSON.parse(text) as { model?: string; key?: string; ms: number };
      this.#until.set(key ? `key:${key}` : String(model), Date.now() + ms);
      res.writeHead(204).end();
    });
    return true;
  }

  /** Whether a call of `model` with `key` meets an outage now. */
  down(model: string, key: string): boolean {
    return Math.max(this.#until.get(model) ?? 0, this.#until.get(`key:${key}`) ?? 0) > Date.now();
  }
}

/** A provider's answer while it is down, as each words a 500. */
export function outageAnswer(format: "openai" | "anthropic"): { status: number; headers: Record<string, string>; json: Json } {
  return format === "openai"
    ? {
        status: 500,
        headers: {},
        json: { error: { message: "The server had an error while processing your request. Sorry about that!", type: "server_error", param: null, code: null } },
      }
    : { status: 500, headers: {}, json: { type: "error", error: { type: "api_error", message: "Internal server error" } } };
}
