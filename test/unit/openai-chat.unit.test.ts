/**
 * The realtime Chat Completions call over `fetch` (src/llm/openai-chat.ts) against the SDK's own
 * `chat.completions.create`, given the same answers by the same `fetch`: the same request goes out,
 * and each failure is the same error — its class, status, message and headers — so the retry
 * policy reads both alike. The e2e suites run it against the fake model server.
 */
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { postChatCompletion, chatCompletionsUrl } from "../../src/llm/openai-chat";
import { classify, headerOf, isThrottle, retryAfterMs, statusOf } from "../../src/llm/errors";
import { DestinationRefused } from "../../src/net/destination";

const params = { model: "gpt-6-luna", messages: [{ role: "user" as const, content: "hi" }], max_completion_tokens: 20 };

type Answer = () => Promise<Response>;
interface Sent {
  url: string;
  method: string;
  body: unknown;
  authorization: string | null;
  contentType: string | null;
}

/** A fetch that records what it was sent and answers with `answer` (or waits for the abort). */
function scripted(answer: Answer, sent: Sent[]): typeof fetch {
  return (async (input: RequestInfo | URL, init?: RequestInit) => {
    const headers = new Headers(init?.headers);
    sent.push({
      url: String(input instanceof Request ? input.url : input),
      method: String(init?.method),
      body: JSON.parse(String(init?.body)),
      authorization: headers.get("authorization"),
      contentType: headers.get("content-type"),
    });
    return answer();
  }) as typeof fetch;
}

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Answer =>
  async () =>
    new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
const text =
  (status: number, body: string, headers: Record<string, string> = {}): Answer =>
  async () =>
    new Response(body, { status, headers });
const throws =
  (err: unknown): Answer =>
  async () => {
    throw err;
  };

async function viaSdk(answer: Answer, timeoutMs = 5_000, baseUrl = "http://model.test/v1"): Promise<{ sent: Sent[]; result: unknown }> {
  const sent: Sent[] = [];
  const client = new OpenAI({ apiKey: "sk-test", baseURL: baseUrl, maxRetries: 0, fetch: scripted(answer, sent) });
  try {
    const response = await client.chat.completions.create(params, { timeout: timeoutMs }).asResponse();
    return { sent, result: await response.text() };
  } catch (err) {
    return { sent, result: err };
  }
}

async function viaFetch(answer: Answer, timeoutMs = 5_000, baseUrl = "http://model.test/v1"): Promise<{ sent: Sent[]; result: unknown }> {
  const sent: Sent[] = [];
  try {
    const answered = await postChatCompletion({ apiKey: "sk-test", baseUrl, fetch: scripted(answer, sent) }, params, timeoutMs);
    return { sent, result: answered.text };
  } catch (err) {
    return { sent, result: err };
  }
}

/** What the retry policy and the stored error read of a failure. */
function reading(err: unknown) {
  const e = err as Error & { status?: number; error?: unknown };
  return {
    class: e.constructor.name,
    message: e.message,
    status: statusOf(err),
    body: e.error,
    classified: classify(err),
    throttle: isThrottle(err),
    retryAfterMs: retryAfterMs(err, 0),
    requestId: headerOf(err, "x-request-id"),
  };
}

const failures: [string, Answer][] = [
  ["400 with an error body", json(400, { error: { message: "bad model", type: "invalid_request_error", code: "model_not_found" } })],
  ["401", json(401, { error: { message: "Incorrect API key provided", type: "invalid_request_error" } }, { "x-request-id": "req_1" })],
  ["403", json(403, { error: { message: "forbidden" } })],
  ["404", json(404, { error: { message: "no such model" } })],
  ["408", json(408, { error: { message: "request timeout" } })],
  ["409", json(409, { error: { message: "conflict" } })],
  ["422", json(422, { error: { message: "unprocessable" } })],
  ["429 with retry-after", json(429, { error: { message: "Rate limit reached", type: "requests" } }, { "retry-after": "7" })],
  ["429 with retry-after-ms", json(429, { error: { message: "slow down" } }, { "retry-after-ms": "1500" })],
  ["500 with a text body", text(500, "upstream exploded")],
  ["502 with an empty body", text(502, "")],
  ["503 with retry-after", json(503, { error: { message: "overloaded" } }, { "retry-after": "2" })],
  ["529", json(529, { type: "error", error: { type: "overloaded_error", message: "Overloaded" } })],
  ["a 4xx whose body is JSON null", text(400, "null")],
  ["a connection refused", throws(new TypeError("fetch failed"))],
  ["a failure that says it timed out", throws(new Error("connect ETIMEDOUT: operation timed out"))],
  ["an abort", throws(new DOMException("The operation was aborted", "AbortError"))],
  ["a refused destination", throws(new DestinationRefused("http://10.0.0.1/v1/chat/completions", "a private address"))],
];

describe("the Chat Completions call over fetch", () => {
  it("sends what the SDK sends: the URL, the method, the body, the key", async () => {
    for (const base of ["http://model.test/v1", "http://model.test/v1/", "https://gw.example/openai/v1"]) {
      const ok = json(200, { choices: [] });
      const [sdk, ours] = [await viaSdk(ok, 5_000, base), await viaFetch(ok, 5_000, base)];
      expect(ours.sent).toEqual(sdk.sent.map((s) => ({ ...s, method: s.method.toUpperCase() })));
      expect(ours.result).toBe(sdk.result);
    }
    expect(chatCompletionsUrl(null)).toBe("https://api.openai.com/v1/chat/completions");
  });

  it.each(failures)("fails as the SDK does on %s", async (_name, answer) => {
    const [sdk, ours] = [await viaSdk(answer), await viaFetch(answer)];
    expect(sdk.result).toBeInstanceOf(Error);
    expect(reading(ours.result)).toEqual(reading(sdk.result));
  });

  it("keeps the refused destination as the failure's cause: no retry", async () => {
    const { result } = await viaFetch(throws(new DestinationRefused("http://10.0.0.1/v1", "a private address")));
    expect((result as Error).cause).toBeInstanceOf(DestinationRefused);
    expect(classify(result)).toBe("permanent");
  });

  it("times out as the SDK does when no answer comes", async () => {
    const never: Answer = () => new Promise<Response>(() => undefined);
    const hang = (signal: AbortSignal | null | undefined) =>
      new Promise<Response>((_resolve, reject) => signal?.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError"))));
    const sent: Sent[] = [];
    const abortable = ((input: RequestInfo | URL, init?: RequestInit) => {
      void scripted(never, sent)(input, init);
      return hang(init?.signal);
    }) as typeof fetch;
    const sdkClient = new OpenAI({ apiKey: "k", baseURL: "http://model.test/v1", maxRetries: 0, fetch: abortable });
    const sdkErr = await sdkClient.chat.completions
      .create(params, { timeout: 30 })
      .asResponse()
      .catch((e: unknown) => e);
    const ourErr = await postChatCompletion({ apiKey: "k", baseUrl: "http://model.test/v1", fetch: abortable }, params, 30).catch((e: unknown) => e);
    expect(reading(ourErr)).toEqual(reading(sdkErr));
    expect(classify(ourErr)).toBe("timeout");
  });

  it("times out when the answer's body stalls (the SDK's timeout ends at the headers; this one does not)", async () => {
    const stalled = ((_input: RequestInfo | URL, init?: RequestInit) => {
      const body = new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('{"choices":'));
          init?.signal?.addEventListener("abort", () => controller.error(new DOMException("aborted", "AbortError")));
        },
      });
      return Promise.resolve(new Response(body, { status: 200 }));
    }) as typeof fetch;
    const err = await postChatCompletion({ apiKey: "k", baseUrl: "http://model.test/v1", fetch: stalled }, params, 30).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIConnectionTimeoutError);
    expect(classify(err)).toBe("timeout");
  });
});
