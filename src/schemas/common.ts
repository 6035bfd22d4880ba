/** Schemas shared by many routes: the error envelope, ids, and the validation-error formatter. */
import { z } from "@hono/zod-openapi";
import type { FieldIssue } from "../lib/errors";
import { MAX_URL_CHARS } from "../net/destination";

export const ErrorSchema = z
  .object({
    error: z.object({
      code: z.string().openapi({ example: "invalid_request" }),
      message: z.string(),
      details: z.unknown().optional(),
    }),
  })
  .openapi("Error");

export const errorResponse = (description: string) => ({
  content: { "application/json": { schema: ErrorSchema } },
  description,
});

/** The error responses every authenticated route can give. */
export const commonErrors = {
  400: errorResponse("Invalid request (see `details`)"),
  401: errorResponse("Missing, unknown or revoked credentials"),
  413: errorResponse("Request body, or one of its fields, too large"),
  415: errorResponse("A request body that is not `application/json`"),
  500: errorResponse("Internal error"),
} as const;

/** `["inputs", 3, "title"]` → `inputs[3].title` */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out || "(body)";
}

export function zodIssues(error: z.ZodError): FieldIssue[] {
  return error.issues.map((issue) => ({ path: formatPath(issue.path), message: issue.message }));
}

export const bearerSecurity = [{ apiKey: [] }];
export const adminSecurity = [{ adminToken: [] }];

// Bounds shared by every request schema (an attacker's field has a size, a range and a form).
export const MAX_MODEL_CHARS = 200;
export const ModelSchema = z
  .string()
  .min(1)
  .max(MAX_MODEL_CHARS)
  .refine((s) => ![...s].some((ch) => (ch.codePointAt(0) ?? 0) < 0x20 || ch === "\u007f"), "must not contain control characters")
  .openapi({ example: "openai/gpt-6-luna", description: "`<provider>/<model name>`, at most 200 characters" });

/** A seed of the seeded draws (src/lib/seeded.ts): any 31-bit non-negative integer. */
export const SeedSchema = z
  .number()
  .int()
  .min(0)
  .max(2 ** 31 - 1);

export const HttpUrlSchema = z.url({ protocol: /^https?$/ }).max(MAX_URL_CHARS);

export const TimeoutSecsSchema = z.number().min(0.1).max(600); // 0.1 s floor: sub-second timeouts serve fast local models (and v1 tests)
