/**
 * Checks on request bodies that run before any route parses them:
 * - a body of a POST/PUT/PATCH must be JSON (`Content-Type: application/json`), else 415
 *   `unsupported_media_type` (POST /v1/pipelines also takes `application/xml`);
 * - its JSON may nest at most MAX_JSON_DEPTH levels and hold at most MAX_JSON_MEMBERS members in
 *   one array or object (400), found by an iterative scan before any parse, so nothing after it
 *   (canonical JSON, schema walking, template values) can overflow the stack, and no parse or
 *   validation spends seconds on millions of members only to refuse them;
 * - it must be valid UTF-8 (400: never decoded with replacement characters), and hold no number
 *   past what a double holds (400: `1e309` would silently become null).
 * Hono caches the body read here; the route's own parse reuses it.
 */
import { createMiddleware } from "hono/factory";
import { ApiError, unsupportedMediaType } from "./errors";
import { jsonShape, MAX_JSON_DEPTH, MAX_JSON_MEMBERS, overflowingNumber } from "./json-depth";
import type { AppEnv } from "../app-env";

/** The methods whose body is read (checked here and by the size limit); other methods' bodies are ignored. */
export const WITH_BODY = new Set(["POST", "PUT", "PATCH"]);

const isJson = (contentType: string | undefined): boolean =>
  contentType !== undefined && /^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i.test(contentType.trim());

export const isXml = (contentType: string | undefined): boolean => contentType !== undefined && /^(application|text)\/xml\s*(;|$)/i.test(contentType.trim());

export const refuseDeepJson = createMiddleware<AppEnv>(async (c, next) => {
  if (!WITH_BODY.has(c.req.method)) return next();
  if (!isJson(c.req.header("content-type"))) {
    if (c.req.method === "POST" && c.req.path === "/v1/pipelines" && isXml(c.req.header("content-type"))) return next(); // the XML reader bounds its own depth
    // Read as bytes, not text: a body of another type is refused, never decoded.
    if ((await c.req.arrayBuffer()).byteLength === 0) return next();
    throw unsupportedMediaType();
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(await c.req.arrayBuffer());
  } catch {
    throw new ApiError(400, "invalid_request", "The body is not valid UTF-8.", { details: [{ path: "(body)", message: "not valid UTF-8" }] });
  }
  if (text.length === 0) return next();
  const { depth, widest } = jsonShape(text);
  if (depth > MAX_JSON_DEPTH) {
    throw new ApiError(400, "invalid_request", `The JSON body nests more than ${MAX_JSON_DEPTH} levels deep; at most ${MAX_JSON_DEPTH}.`, {
      details: [{ path: "(body)", message: `nested deeper than ${MAX_JSON_DEPTH} levels` }],
    });
  }
  if (widest > MAX_JSON_MEMBERS) {
    throw new ApiError(400, "invalid_request", `An array or object in the JSON body holds more than ${MAX_JSON_MEMBERS} members.`, {
      details: [
        { path: "(body)", message: `more than ${MAX_JSON_MEMBERS} members in one array or object (items: at most the deployment's MAX_ITEMS_PER_JOB)` },
      ],
    });
  }
  const huge = overflowingNumber(text);
  if (huge !== null) {
    throw new ApiError(400, "invalid_request", `The JSON body holds a number past what a double holds (${huge}); send it as a string.`, {
      details: [{ path: "(body)", message: `the number ${huge} is out of range` }],
    });
  }
  return next();
});
