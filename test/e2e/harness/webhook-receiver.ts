/** A real HTTP receiver for webhook tests: answers with a scripted status sequence and records every request. */
import { createServer, type Server } from "node:http";

export interface Received {
  headers: Record<string, string>;
  body: string;
  at: number;
}

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  close(): Promise<void>;
}

/** `statuses[i]` answers request i; the last one repeats. */
export function startReceiver(statuses: number[] = [200], port = 0, headersFor: Record<number, Record<string, string>> = {}): Promise<Receiver> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers[k] = v;
      received.push({ headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() });
      const status = statuses[Math.min(received.length - 1, statuses.length - 1)] ?? 200;
      res.writeHead(status, { "content-type": "text/plain", ...headersFor[status] }).end(`answer ${received.length}: ${"x".repeat(2_000)}`);
    });
  });
  return new Promise((resolve) => {
    server.listen(port, "127.0.0.1", () => {
      const address = server.address();
      const bound = typeof address === "object" && address ? address.port : 0;
      resolve({
        url: `http://127.0.0.1:${bound}/hooks`,
        port: bound,
        received,
        close: () =>
          new Promise<void>((r) => {
            server.closeAllConnections();
            server.close(() => r());
          }),
      });
    });
  });
}
