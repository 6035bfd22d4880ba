/**
 * The plan of v1 operators: one stage, `items`, one independent task per input; a failed item
 * does not stop the others, and the job completes once every item has a result.
 */
import type { Advance, Plan, PlanReader } from "../engine/types";

export const ITEMS_STAGE = "items";

export function itemsPlan(inputs: unknown[], sessionId: () => string | null = () => null): Plan {
  return {
    stages: [{ name: ITEMS_STAGE, total: inputs.length }],
    tasks: inputs.map((input, index) => ({ stage: ITEMS_STAGE, index, input, sessionId: sessionId() })),
  };
}

export function completeWhenAllDone(reader: PlanReader): Advance {
  return reader.open() === 0 ? { ready: [], end: { status: "completed", output: null, error: null } } : { ready: [] };
}
