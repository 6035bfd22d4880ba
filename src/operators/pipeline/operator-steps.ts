/**
 * The operators that are also pipeline step types (contract v3, "Semantic operators"), by the
 * step's `type`. A step of one of them runs the operator's plan over a list from the shared store
 * (./sub-plan.ts); adding one is its `step.ts` (../operator-step.ts) and a line here.
 */
import type { OperatorStep } from "../operator-step";
import { classifyStep } from "../classify/step";
import { filterStep } from "../filter/step";
import { rankStep } from "../rank/step";
import { resolveStep } from "../resolve/step";
import { joinStep } from "../join/step";

export const OPERATOR_STEPS: Readonly<Record<string, OperatorStep>> = {
  filter: filterStep,
  classify: classifyStep,
  rank: rankStep,
  resolve: resolveStep,
  join: joinStep,
};

export function operatorStep(type: string): OperatorStep {
  const step = Object.hasOwn(OPERATOR_STEPS, type) ? OPERATOR_STEPS[type] : undefined;
  if (!step) throw new Error(`no operator step of type ${type}`);
  return step;
}
