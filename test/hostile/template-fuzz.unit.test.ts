/**
 * The template runtime's cost model, held by construction and by fuzzing:
 * - every filter, test and method the renderer can run has a declared cost (./src/template/costs),
 *   and whatever the interpreter has without one is refused at submission — so adding a filter
 *   without its declaration fails here;
 * - every declared test, method and function, called with adversarial operands and arguments
 *   (./fuzz-harness), ends within its time bound with a value or a clean error; the filters,
 *   directly and through `map`, are fuzzed beside this file (./template-fuzz-filters).
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { Environment } from "@huggingface/jinja";
import { describe, expect, test } from "vitest";
import { ARG_TESTS } from "../../src/template/arg-tests";
import { FILTER_COSTS, FUNCTION_COSTS, METHOD_COSTS, TEST_COSTS } from "../../src/template/costs";
import { EXTRA_FILTERS } from "../../src/template/filters";
import { compileTemplate } from "../../src/template/jinja";
import { argList, fuzz, FUZZ_TIMEOUT_MS } from "./fuzz-harness";
import { PY_TESTS } from "../../src/template/py-tests";
import { InputError } from "../../src/lib/errors";

describe("every callable the renderer has is declared", () => {
  const jinjaSource = readFileSync(new URL("../../src/template/jinja.ts", import.meta.url), "utf8");

  test("Fanout's filters: each name the renderer dispatches on has a cost", () => {
    const dispatch = jinjaSource.slice(jinjaSource.indexOf("function pythonFilter("), jinjaSource.indexOf("proto.evaluateBlock"));
    expect(dispatch.length).toBeGreaterThan(1_000);
    const dispatched = new Set([...dispatch.matchAll(/case "(\w+)":|name === "(\w+)"/g)].map((m) => m[1] ?? m[2]));
    for (const name of [...dispatched, ...EXTRA_FILTERS.keys()]) expect(Object.hasOwn(FILTER_COSTS, name as string), `filter ${name}`).toBe(true);
  });

  test("tests: Fanout's and the interpreter's own", () => {
    for (const name of [...PY_TESTS.keys(), ...ARG_TESTS.keys(), ...new Environment().tests.keys()]) {
      expect(Object.hasOwn(TEST_COSTS, name), `test ${name}`).toBe(true);
    }
  });

  test("methods of strings, lists and dicts", () => {
    for (const value of ["x", [1], { a: 1 }]) {
      const runtime = new Environment().set("v", value) as { builtins?: Map<string, { type: string }> };
      for (const [name, member] of runtime.builtins ?? []) {
        if (member.type === "FunctionValue") expect(Object.hasOwn(METHOD_COSTS, name), `method ${name}`).toBe(true);
      }
    }
  });

  test("the interpreter's filters without a declaration are refused at submission", () => {
    const require = createRequire(import.meta.url);
    const hf = readFileSync(require.resolve("@huggingface/jinja").replace(/index\.cjs$/, "index.js"), "utf8");
    const applyFilter = hf.slice(hf.indexOf("  applyFilter("), hf.indexOf("  evaluateFilterExpression("));
    const names = new Set([...applyFilter.matchAll(/case "(\w+)":/g)].map((m) => m[1] as string));
    expect(names.size).toBeGreaterThan(20);
    for (const name of names) {
      if (Object.hasOwn(FILTER_COSTS, name)) continue;
      expect(() => compileTemplate(`{{ v | ${name} }}`, "t", []), name).toThrow(InputError);
    }
  });
});

describe("adversarial operands and arguments end within their bounds", () => {
  test.each(Object.keys(TEST_COSTS).filter((name) => /^\w+$/.test(name)))(
    "test %s",
    (name) => {
      fuzz((args) => (args.length === 0 ? `{{ v is ${name} }}` : `{{ v is ${name} ${args[0]} }}`));
    },
    FUZZ_TIMEOUT_MS,
  );

  test.each(Object.keys(METHOD_COSTS))(
    "method %s",
    (name) => {
      fuzz((args) => `{{ v.${name}(${argList(args)}) }}`);
    },
    FUZZ_TIMEOUT_MS,
  );

  test.each(Object.keys(FUNCTION_COSTS))(
    "function %s",
    (name) => {
      fuzz((args) => `{{ ${name}(${argList(args)}) }}{{ v }}`);
    },
    FUZZ_TIMEOUT_MS,
  );
});

describe("operators on adversarial operands end within their bounds, once and in a loop", () => {
  const OPERATORS = ["in", "not in", "~", "+", "-", "*", "/", "//", "%", "**", "==", "!=", "<", ">", "<=", ">=", "and", "or"];
  // The operators that scan or compare whole values run in a loop of 10,000 (50,000 steps, within the
  // render's bound: each scan of a 10,000-element list must be charged too); the others, 1,000.
  const SCANS = new Set(["in", "not in", "==", "!="]);
  test.each(OPERATORS)(
    "operator %s",
    (op) => {
      const other = (args: string[]) => args[0] ?? "v";
      fuzz((args) => `{{ v ${op} ${other(args)} }}{{ ${other(args)} ${op} v }}`);
      fuzz((args) => `{% for i in range(${SCANS.has(op) ? 10_000 : 1_000}) %}{% if (${other(args)} ${op} v) %}{% endif %}{% endfor %}`);
    },
    FUZZ_TIMEOUT_MS,
  );

  test("a membership test in a loop is stopped at the render's declared ceiling, not 10× past it", () => {
    const template = compileTemplate("{% for i in range(10000) %}{% if i in v %}x{% endif %}{% endfor %}", "t", []);
    const list = Array.from({ length: 10_000 }, (_, i) => -i - 1); // no member: every scan is the whole list
    expect(() => template.renderVars({ v: list })).toThrow(/the test 'in' is over the limit of 100000 steps of work/);
    const text = compileTemplate("{% for i in range(1000) %}{% if v in w %}x{% endif %}{% endfor %}", "t", []);
    expect(() => text.renderVars({ v: `${"a".repeat(2_000)}b`, w: "a".repeat(250_000) })).toThrow(/the test 'in' is over the limit/);
  });
});
