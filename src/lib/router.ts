/** Every router is an OpenAPIHono whose failed request validation becomes 400 `invalid_request`. */
import { OpenAPIHono, z } from "@hono/zod-openapi";
import { invalidRequest } from "./errors";
import { zodIssues } from "../schemas/common";
import type { AppEnv } from "../app-env";

export function newRouter(): OpenAPIHono<AppEnv> {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) throw invalidRequest("The request is invalid.", zodIssues(result.error));
    },
  });
}

export const jsonBody = <T extends z.ZodType>(schema: T) => ({
  required: true,
  content: { "application/json": { schema } },
});

export const jsonResponse = <T extends z.ZodType>(schema: T, description: string) => ({
  content: { "application/json": { schema } },
  description,
});

/**
 * A JSON body that may be absent (an empty POST means "no overrides"): documented by its
 * component's name, and parsed by the handler, since the OpenAPI layer would refuse an empty body
 * sent with a JSON content type. The component is registered with the route (`register`).
 */
export const optionalJsonBody = (component: string) => ({
  required: false,
  content: { "application/json": { schema: { $ref: `#/components/schemas/${component}` } } },
});
