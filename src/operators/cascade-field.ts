/** The `cascade` field of filter and classify (./judge.ts runs it). */
import { z } from "@hono/zod-openapi";
import { ModelSchema } from "../schemas/common";
import { invalidRequest } from "../lib/errors";

export const CascadeSchema = z
  .strictObject({
    model: ModelSchema.openapi({ description: "The cheaper model that answers every item first, with a confidence" }),
    accept_above: z.number().min(0).max(1).default(0.9).openapi({ description: "Its answer is the item's when its confidence is at least this" }),
    reject_below: z.number().min(0).max(1).optional().openapi({ description: "Filter only (default 0.1): the item is dropped when the confidence that it should be kept is at most this" }),
  })
  .openapi("Cascade", {
    description: "A model cascade: the cheaper model answers every item first; only the items it is unsure of go on to the job's `model`. Each result says `decided_by` (`cascade` or `model`); the `cascade` stage holds the cheaper calls and their usage.",
    example: { model: "openai/gpt-6-luna", accept_above: 0.9, reject_below: 0.1 },
  });

export type CascadeRequest = z.infer<typeof CascadeSchema>;

/** 400 unless the thresholds leave the job's model something to decide. */
export function checkThresholds(acceptAbove: number, rejectBelow: number | null): void {
  if (rejectBelow !== null && rejectBelow >= acceptAbove) {
    throw invalidRequest("cascade.reject_below must be under cascade.accept_above.", [{ path: "cascade.reject_below", message: `${rejectBelow} is not under accept_above ${acceptAbove}` }]);
  }
}
