/**
 * One Chat Completions request over `fetch`: the hot path of every OpenAI and OpenAI-compatible
 * call. The SDK's `chat.completions.create` does per call what this does not need: it merges its
 * headers through several layers, formats the request and response for a debug log it does not
 * print, and builds its URL twice (~0.1 ms of server CPU per call, BENCHMARKS.md). The
 * batch API's calls (files, batches) stay on the SDK.
 *
 * Its failures are the SDK's, made as the SDK makes them, so `./errors` classifies both alike: an
 * answer that is not 2xx is `APIError.generate(status, body, text, headers)` (BadRequestError,
 * RateLimitError…, with the provider's headers for `retry-after`); an abort or a failure that says
 * it timed out is `APIConnectionTimeoutError`; any other failure before an answer is
 * `APIConnectionError` with the failure as its cause (a refused destination stays findable there).
 * Unlike the SDK, the timeout also covers reading the answer's body: a body that stalls is a
 * timeout, not a call that never ends.
 */
import OpenAI from "openai";
import type { ChatCompletionCreateParamsNonStreaming } from "openai/resources/chat/completions";
import { ProviderFailure } from "./errors";
import { fromHeaders, rateObservation } from "./rate-headers";
import { callTimeout } from "./call-timer";
import type { ModelResponse, ProviderEndpoint } from "./types";

const DEFAULT_BASE_URL = "https://api.openai.com/v1"; // the SDK's, when no base URL is set

/** The endpoint's Chat Completions URL, joined as the SDK joins a base URL and a path. */
export function chatCompletionsUrl(baseUrl: string | null): string {
  const base = baseUrl ?? DEFAULT_BASE_URL;
  return new URL(`${base}${base.endsWith("/") ? "" : "/"}chat/completions`).toString();
}

function errorOf(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}

/** A failure before an answer (or while reading it), as the SDK reports it. */
function connectionError(cause: unknown, aborted: boolean): Error {
  const err = errorOf(cause);
  const timedOut = aborted || err.name === "AbortError" || /timed? ?out/i.test(String(err) + ("cause" in err ? String(err.cause) : ""));
  return timedOut ? new OpenAI.APIConnectionTimeoutError() : new OpenAI.APIConnectionError({ cause: err });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export interface ChatAnswer {
  /** The answer's body as text (the caller parses it: a 200 of the wrong shape is its failure to name). */
  text: string;
  headers: Headers;
}

/**
 * A 2xx answer read as a model answer by `read` (a completion, an embedding), with its rate-limit
 * headers; a body that is not JSON is a permanent failure naming what it should have been.
 */
export function modelAnswer(answer: ChatAnswer, what: string, read: (body: unknown) => Omit<ModelResponse, "rate">): ModelResponse {
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    throw new ProviderFailure(`the provider's answer is not ${what} (it is not JSON)`, "permanent");
  }
  const rate = rateObservation(fromHeaders(answer.headers), "openai");
  return rate ? { ...read(body), rate } : read(body);
}

/** Sends one Chat Completions request and returns its 2xx answer, or throws as the SDK would (above). */
export function postChatCompletion(endpoint: ProviderEndpoint, params: ChatCompletionCreateParamsNonStreaming, timeoutMs: number): Promise<ChatAnswer> {
  return postOpenAi(endpoint, chatCompletionsUrl(endpoint.baseUrl), params, timeoutMs);
}

/** The endpoint's URL of an API path (`embeddings`), joined as the SDK joins a base URL and a path. */
export function apiUrl(baseUrl: string | null, path: string): string {
  const base = baseUrl ?? DEFAULT_BASE_URL;
  return new URL(`${base}${base.endsWith("/") ? "" : "/"}${path}`).toString();
}

/** Sends one JSON request to an OpenAI (or compatible) API URL and returns its 2xx answer, or throws as the SDK would. */
export async function postOpenAi(endpoint: ProviderEndpoint, url: string, params: object, timeoutMs: number): Promise<ChatAnswer> {
  const timeout = callTimeout(timeoutMs); // the call worker's loop's timer, or one of its own (./call-timer.ts)
  const send = endpoint.fetch ?? fetch;
  try {
    let response: Response;
    try {
      response = await send(url, {
        method: "POST",
        headers: {
          authorization: `Bearer ${endpoint.apiKey ?? "unused"}`, // local OpenAI-compatible servers often take no key
          "content-type": "application/json",
          accept: "application/json",
        },
        body: JSON.stringify(params),
        signal: timeout.signal,
      });
    } catch (err) {
      throw connectionError(err, timeout.signal.aborted);
    }
    if (!response.ok) {
      const errText = await response.text().catch((err: unknown) => errorOf(err).message);
      const errJson = parseJson(errText);
      throw OpenAI.APIError.generate(response.status, errJson as object | undefined, errJson ? undefined : errText, response.headers);
    }
    try {
      return { text: await response.text(), headers: response.headers };
    } catch (err) {
      throw connectionError(err, timeout.signal.aborted);
    }
  } finally {
    timeout.release();
  }
}
