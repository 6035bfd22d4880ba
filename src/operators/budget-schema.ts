/** `token_budget`, common to every job-creating POST (its own module: the v1 schemas use it too). */
import { z } from "@hono/zod-openapi";

export const TokenBudgetSchema = z
  .strictObject({
    total: z.number().int().positive().max(1e12).openapi({ description: "Tokens (input + output) the job may spend" }),
    on_exhausted: z.enum(["pause", "fail"]).default("pause"),
  })
  .openapi("TokenBudget");
