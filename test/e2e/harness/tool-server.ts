/** A plain HTTP tool endpoint for agent tests: records each call's JSON arguments and answers per path. */
import { createServer, type Server } from "node:http";

export interface ToolServer {
  url(path: string): string;
  calls: { path: string; args: any }[];
  close(): Promise<void>;
}

/** An agent's http tool `lookup` ({"q"}) on a tool server's `/lookup`, read-only. */
export const lookupTool = (tools: ToolServer) => ({
  type: "http",
  name: "lookup",
  description: "looks things up",
  input_schema: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
  url: tools.url("/lookup"),
  read_only: true,
});

/** `answers[path]` is [status, text]; unknown paths answer 200 with `result for <args>`. */
export function startToolServer(answers: Record<string, [number, string]> = {}): Promise<ToolServer> {
  const calls: ToolServer["calls"] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const path = req.url ?? "/";
      const args = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}");
      calls.push({ path, args });
      const [status, text] = answers[path] ?? [200, `result for ${JSON.stringify(args)}`];
      res.writeHead(status, { "content-type": "text/plain" }).end(text);
    });
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      resolve({
        url: (path) => `http://127.0.0.1:${port}${path}`,
        calls,
        close: () =>
          new Promise<void>((r) => {
            server.closeAllConnections();
            server.close(() => r());
          }),
      });
    });
  });
}
