/**
 * Every declared filter (./src/template/costs), called with adversarial operands and arguments
 * (./fuzz-harness), directly and through `map` (the same charging path), ends within its time
 * bound with a value or a clean error.
 */
import { describe, expect, test } from "vitest";
import { FILTER_COSTS } from "../../src/template/costs";
import { argList, fuzz, FUZZ_TIMEOUT_MS, MAP_ARG_LISTS } from "./fuzz-harness";

describe("filters on adversarial operands and arguments end within their bounds", () => {
  test.each(Object.keys(FILTER_COSTS))(
    "filter %s, directly and through map",
    (name) => {
      const direct = fuzz((args) => (args.length === 0 ? `{{ v | ${name} }}` : `{{ v | ${name}(${argList(args)}) }}`));
      const mapped = fuzz((args) => `{{ [v, v] | map('${name}'${args.length ? `, ${argList(args)}` : ""}) | list | length }}`, MAP_ARG_LISTS);
      expect(direct.count).toBeGreaterThan(100);
      expect(mapped.count).toBeGreaterThan(25);
    },
    FUZZ_TIMEOUT_MS,
  );
});
