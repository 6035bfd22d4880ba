/**
 * What can be seen before any item is rendered: a `range()` whose arguments are constants
 * (`range(10**7)`), and loops over constant ranges nested so deep that their iterations
 * multiply past the step budget, and a filter whose constant arguments alone put its declared cost
 * (./costs) past the budget, whatever it is applied to (`slice(10**8)`, `center(10**9)`). Such a
 * template would fail every item, so submission refuses it.
 */
import { LOOP_ITERATION_STEPS, RenderBudget, TemplateLimitError, type RenderLimits } from "./render-budget";
import { FILTER_COSTS } from "./costs";
import type { Value } from "./runtime-value";

interface Node {
  type: string;
  [key: string]: unknown;
}

const isNode = (value: unknown): value is Node => typeof value === "object" && value !== null && typeof (value as { type?: unknown }).type === "string";

/** The value of a constant integer expression, or null when it depends on data. */
export function constantValue(node: unknown): number | null {
  if (!isNode(node)) return null;
  if (node.type === "IntegerLiteral" || node.type === "FloatLiteral") return typeof node.value === "number" ? node.value : null;
  if (node.type === "UnaryExpression") {
    const operand = constantValue(node.argument);
    const op = (node.operator as { value?: string } | undefined)?.value;
    if (operand === null) return null;
    return op === "-" ? -operand : op === "+" ? operand : null;
  }
  if (node.type === "BinaryExpression") {
    const [a, b] = [constantValue(node.left), constantValue(node.right)];
    if (a === null || b === null) return null;
    switch ((node.operator as { value?: string }).value) {
      case "+":
        return a + b;
      case "-":
        return a - b;
      case "*":
        return a * b;
      case "**":
        return a ** b;
      case "//":
        return b === 0 ? null : Math.floor(a / b);
      case "%":
        return b === 0 ? null : a % b;
      default:
        return null;
    }
  }
  return null;
}

/** The length of `range(...)` when its arguments are constants, else null. */
function constantRangeLength(node: Node): number | null {
  const callee = node.callee;
  if (!isNode(callee) || callee.type !== "Identifier" || callee.value !== "range") return null;
  const args = Array.isArray(node.args) ? node.args.map(constantValue) : [];
  if (args.length === 0 || args.length > 3 || args.some((a) => a === null)) return null;
  const [x, y, z] = args as number[];
  const [from, to, step] = args.length === 1 ? [0, x as number, 1] : [x as number, y as number, z ?? 1];
  if (step === 0) return null;
  return Math.max(0, Math.ceil((to - from) / step));
}

function walk(node: unknown, visit: (n: Node, loops: number) => void, loops: number): void {
  if (Array.isArray(node)) {
    for (const child of node) walk(child, visit, loops);
    return;
  }
  if (node instanceof Map) {
    for (const [k, v] of node) {
      walk(k, visit, loops);
      walk(v, visit, loops);
    }
    return;
  }
  if (!isNode(node)) return;
  visit(node, loops);
  let inner = loops;
  if (node.type === "For" && isNode(node.iterable) && node.iterable.type === "CallExpression") {
    inner = loops * Math.max(1, constantRangeLength(node.iterable) ?? 1);
  }
  for (const [key, value] of Object.entries(node)) {
    if (key === "type") continue;
    walk(value, visit, key === "body" ? inner : loops);
  }
}

function constantArgument(node: unknown): Value | null {
  if (isNode(node) && node.type === "StringLiteral" && typeof node.value === "string")
    return { type: "StringValue", value: node.value, toString: () => node.value as string };
  if (isNode(node) && node.type === "Identifier" && typeof node.value === "string" && /^(true|false|True|False)$/.test(node.value)) {
    const truth = /^[tT]/.test(node.value);
    return { type: "BooleanValue", value: truth, toString: () => String(truth) };
  }
  const n = constantValue(node);
  if (n === null) return null;
  return { type: Number.isInteger(n) ? "IntegerValue" : "FloatValue", value: n, toString: () => String(n) };
}

const EMPTY_OPERANDS: Value[] = [
  { type: "StringValue", value: "", toString: () => "" },
  { type: "ArrayValue", value: [], toString: () => "[]" },
];

/** Why `name(args)` is over the budget even on an empty string or list, when its arguments are constants; else null. */
function constantFilterProblem(filter: unknown, limits: RenderLimits): string | null {
  if (!isNode(filter) || filter.type !== "CallExpression" || !isNode(filter.callee) || filter.callee.type !== "Identifier") return null;
  const name = String(filter.callee.value);
  const declared = Object.hasOwn(FILTER_COSTS, name) ? FILTER_COSTS[name] : undefined;
  const nodes = Array.isArray(filter.args) ? filter.args : [];
  const args: Value[] = [];
  const kwargs = new Map<string, Value>();
  for (const node of nodes) {
    const keyword = isNode(node) && node.type === "KeywordArgumentExpression" && isNode(node.key) ? String(node.key.value) : null;
    const value = constantArgument(keyword === null ? node : (node as Node).value);
    if (value === null) return null;
    if (keyword === null) args.push(value);
    else kwargs.set(keyword, value);
  }
  if (!declared) return null;
  let problem: string | null = null;
  for (const operand of EMPTY_OPERANDS) {
    try {
      new RenderBudget(limits).charge(`${name}()`, declared({ operand, args, kwargs, cap: limits.maxOutputChars }));
      return null; // fits for this operand
    } catch (err) {
      if (!(err instanceof TemplateLimitError)) return null;
      problem = err.message;
    }
  }
  return problem;
}

/** Why this template would break a render limit whatever the item, or null. */
export function staticLimitProblem(program: { body: unknown[] }, limits: RenderLimits): string | null {
  let problem: string | null = null;
  walk(
    program.body,
    (node, loops) => {
      if (problem) return;
      if (node.type === "FilterExpression" || node.type === "FilterStatement") problem = constantFilterProblem(node.filter, limits);
      if (problem) return;
      if (node.type === "CallExpression") {
        const length = constantRangeLength(node);
        if (length !== null && length > limits.maxRange) {
          problem = `range() of ${length} items is over this deployment's limit of ${limits.maxRange}`;
        }
      }
      if (node.type === "For" && isNode(node.iterable) && node.iterable.type === "CallExpression") {
        const iterations = loops * (constantRangeLength(node.iterable) ?? 1);
        if (iterations * LOOP_ITERATION_STEPS > limits.maxSteps) {
          problem = `nested loops run ${iterations} iterations; this deployment allows at most ${limits.maxSteps} steps per render (an iteration is ${LOOP_ITERATION_STEPS})`;
        }
      }
    },
    1,
  );
  return problem;
}
