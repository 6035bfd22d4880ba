/**
 * A model endpoint that never answers, for the integration runtime's OPENAI_COMPATIBLE_BASE_URL
 * (it runs in the Node process of the vitest config). The coordinator tests play the workers: they
 * dispatch, then take the running tasks over under tokens of their own. The real workers still
 * get those dispatches; with no endpoint at all their attempt failed at once and its report could
 * land before the takeover on a loaded machine (the item ended with the config error, and the
 * test's own report was stale). Against this endpoint the real attempt waits on its call, so its
 * report, if it ever comes, is stale. A test that wants an attempt to fail at once uses a model
 * with no endpoint (`openai/…`: no key in the test environment).
 */
import { createServer, type Socket } from "node:net";

export async function startModelTarpit(): Promise<string> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("error", () => socket.destroy());
    socket.on("close", () => sockets.delete(socket));
    socket.unref(); // held open, never answered, and never what keeps the test process alive
  });
  server.unref();
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("the model tarpit has no port");
  return `http://127.0.0.1:${address.port}/v1`;
}
