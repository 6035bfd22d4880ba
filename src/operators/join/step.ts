/**
 * Join as a pipeline step over two lists of the shared store (`left_from`, `right_from`): its pairs
 * are found when the step starts (the bound checked then, as a submission checks it), its value is
 * the job's output. `auto` needs the lists to settle, which a step has only when it runs: refused.
 */
import { invalidRequest } from "../../lib/errors";
import { defineStep } from "../operator-step";
import { joinOperator } from "./plan";
import { JoinRequestSchema } from "./schema";
import { checkJoin, joinInputs, joinSpec } from "./submit";

type Lists = [unknown[], unknown[]];

export const joinStep = defineStep({
  operator: joinOperator,
  schema: JoinRequestSchema,
  lists: { left_from: "left", right_from: "right" },
  spec: (env, body, base) => {
    if (body.strategy === "auto")
      throw invalidRequest("A join step's lists are known only when it runs: choose its strategy.", [
        { path: "strategy", message: "pairs or classify in a step" },
      ]);
    return joinSpec(env, body, base, body.strategy);
  },
  check: (spec, lists) => void checkJoin(spec, lists as Lists),
  itemsOf: (spec, lists) => joinInputs(spec, lists as Lists, checkJoin(spec, lists as Lists)),
  value: (_spec, output) => output,
});
