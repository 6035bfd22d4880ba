/** `token_budget`, common to every job-creating POST (its own module: the v1 schemas use it too). */
import { z } from "@hono/zod-openapi";

export const MAX_BUDGET_USD = 1e7;

export const budgetUsdField = {
  usd: z.number().positive().max(MAX_BUDGET_USD).optional().openapi({
    description:
      "Dollars the job may spend (contract v3): enforced like `total`, reserve-then-settle, at the shipped or deployment prices. Every model the job uses must have a price.",
  }),
};

const needsALimit = (b: { total?: number; usd?: number }) => b.total !== undefined || b.usd !== undefined;
const NEEDS_A_LIMIT = { message: "token_budget needs `total` (tokens), `usd` (dollars) or both" };

export const TokenBudgetSchema = z
  .strictObject({
    total: z.number().int().positive().max(1e12).optional().openapi({ description: "Tokens (input + output) the job may spend" }),
    ...budgetUsdField,
    on_exhausted: z.enum(["pause", "fail"]).default("pause"),
  })
  .refine(needsALimit, NEEDS_A_LIMIT)
  .openapi("TokenBudget");

/** A resume's or a recover's new limits: either or both. */
export const BudgetChangeSchema = z
  .strictObject({ total: z.number().int().positive().max(1e12).optional(), ...budgetUsdField })
  .refine(needsALimit, NEEDS_A_LIMIT);
