/**
 * The fake's `GET /v1/models`, as OpenAI answers it: `{"object": "list", "data": [{"id",
 * "object": "model", "created", "owned_by", "shutdown_date"}]}` — the models the fake serves with
 * no shutdown announced, and for an API key a test scripted (`POST /_fake/models {"key", "data"}`)
 * that key's own listing, or `{"key", "status": 500}` a listing that fails. `GET /_fake/models?key=K`
 * says how often the key's listing was read.
 */
import type { IncomingMessage, ServerResponse } from "node:http";

interface ListedModel {
  id: string;
  shutdown_date: string | null;
}

/** A key's scripted listing: its models, or an error status the listing answers with. */
type Scripted = ListedModel[] | { status: number };

const SERVED = ["gpt-6-luna", "gpt-6-sol", "gpt-5.6-luna", "gpt-5.6-terra"];

export class FakeModelListing {
  readonly #scripted = new Map<string, Scripted>();
  readonly #reads = new Map<string, number>();

  /** Answers the request if it is the listing's or its control's. */
  handle(req: IncomingMessage, res: ServerResponse, url: URL, key: string, readBody: () => Promise<string>): boolean {
    if (req.method === "GET" && url.pathname.endsWith("/v1/models")) {
      this.#reads.set(key, (this.#reads.get(key) ?? 0) + 1);
      const listed = this.#scripted.get(key) ?? SERVED.map((id) => ({ id, shutdown_date: null }));
      if (!Array.isArray(listed)) {
        res.writeHead(listed.status, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: "fake: the listing is down", type: "server_error", param: null, code: null } }));
        return true;
      }
      const data = listed.map((m) => ({ id: m.id, object: "model", created: 1_767_225_600, owned_by: "system", shutdown_date: m.shutdown_date }));
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ object: "list", data }));
      return true;
    }
    if (url.pathname === "/_fake/models" && req.method === "POST") {
      void readBody().then((text) => {
        const { key: scriptedKey, data, status } = JSON.parse(text) as { key: string; data?: ListedModel[]; status?: number };
        this.#scripted.set(scriptedKey, status ? { status } : (data ?? []));
        res.writeHead(204).end();
      });
      return true;
    }
    if (url.pathname === "/_fake/models" && req.method === "GET") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ reads: this.#reads.get(url.searchParams.get("key") ?? "") ?? 0 }));
      return true;
    }
    return false;
  }
}
