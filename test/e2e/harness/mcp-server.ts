/**
 * A real MCP server for agent tests (Streamable HTTP, stateless): `lookup` is read-only,
 * `delete_record` is not. Every call is recorded so tests can see what an agent executed.
 */
import { createServer, type Server } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

export interface McpTestServer {
  url: string;
  calls: { name: string; args: unknown }[];
  close(): Promise<void>;
}

function buildServer(calls: McpTestServer["calls"]): McpServer {
  const server = new McpServer({ name: "fanout-test-tools", version: "1.0.0" });
  server.registerTool("lookup", { description: "Look a word up", inputSchema: { q: z.string() }, annotations: { readOnlyHint: true } }, async ({ q }) => {
    calls.push({ name: "lookup", args: { q } });
    return { content: [{ type: "text", text: `definition of ${q}` }] };
  });
  server.registerTool(
    "delete_record",
    { description: "Delete a record", inputSchema: { q: z.string() }, annotations: { readOnlyHint: false, destructiveHint: true } },
    async ({ q }) => {
      calls.push({ name: "delete_record", args: { q } });
      return { content: [{ type: "text", text: `deleted ${q}` }] };
    },
  );
  return server;
}

export function startMcpServer(): Promise<McpTestServer> {
  const calls: McpTestServer["calls"] = [];
  const http: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const server = buildServer(calls);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on("close", () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, text ? JSON.parse(text) : undefined);
    });
  });
  return new Promise((resolve) => {
    http.listen(0, "127.0.0.1", () => {
      const address = http.address();
      const port = typeof address === "object" && address ? address.port : 0;
      resolve({
        url: `http://127.0.0.1:${port}/mcp`,
        calls,
        close: () =>
          new Promise<void>((r) => {
            http.closeAllConnections();
            http.close(() => r());
          }),
      });
    });
  });
}
