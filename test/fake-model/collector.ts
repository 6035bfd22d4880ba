/**
 * The fake's OTLP/HTTP trace collector (JSON): `POST /_fake/otlp/v1/traces` keeps the spans (with
 * the request's `authorization`), `GET /_fake/otlp/spans?trace=ID` lists a trace's; a collector
 * that is down: `POST /_fake/otlp-down/v1/traces` answers 500; one that hangs:
 * `POST /_fake/otlp-hang/v1/traces` never answers (`GET /_fake/otlp/hanging` counts them).
 */
import type { IncomingMessage, ServerResponse } from "node:http";

type Json = Record<string, unknown>;
const MAX_SPANS = 20_000;

export class FakeCollector {
  readonly #spans: (Json & { authorization: string | null })[] = [];
  #hanging = 0;

  handle(req: IncomingMessage, res: ServerResponse, url: URL, readBody: () => Promise<string>): boolean {
    if (req.method === "POST" && url.pathname === "/_fake/otlp-down/v1/traces") {
      void readBody().then(() => res.writeHead(500, { "content-type": "application/json" }).end('{"error":"fake: the collector is down"}'));
      return true;
    }
    if (req.method === "POST" && url.pathname === "/_fake/otlp-hang/v1/traces") {
      this.#hanging++; // held until the server closes
      return true;
    }
    if (req.method === "GET" && url.pathname === "/_fake/otlp/hanging") {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ hanging: this.#hanging }));
      return true;
    }
    if (req.method === "POST" && url.pathname === "/_fake/otlp/v1/traces") {
      const authorization = typeof req.headers.authorization === "string" ? req.headers.authorization : null;
      void readBody().then((text) => {
        const body = JSON.parse(text) as { resourceSpans?: { scopeSpans?: { spans?: Json[] }[] }[] };
        for (const resource of body.resourceSpans ?? [])
          for (const scope of resource.scopeSpans ?? [])
            for (const span of scope.spans ?? []) if (this.#spans.length < MAX_SPANS) this.#spans.push({ ...span, authorization });
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      });
      return true;
    }
    if (req.method === "GET" && url.pathname === "/_fake/otlp/spans") {
      const trace = url.searchParams.get("trace");
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(this.#spans.filter((s) => s.traceId === trace)));
      return true;
    }
    return false;
  }
}
