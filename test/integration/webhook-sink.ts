/**
 * A webhook receiver that refuses every delivery with 503, for the integration runtime's webhook
 * tests (it runs in the Node process of the vitest config). A delivery to a refused port would do
 * as well, but workerd logs every refused connection as an uncaught "Network connection lost"
 * even when the fetch's rejection is caught, and a passing run should print no alarming line.
 */
import { createServer } from "node:http";

export async function startWebhookSink(): Promise<string> {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(503, { "content-type": "text/plain", connection: "close" }).end("not now"));
  });
  server.unref();
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("the webhook sink has no port");
  return `http://127.0.0.1:${address.port}/hook`;
}
