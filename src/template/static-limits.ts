/**
 * What can be seen before any item is rendered: a `range()` whose arguments are constants
 * (`range(10**7)`), and loops over constant ranges nested so deep that their iterations
 * multiply past the step budget. Such a template would fail every item, so submission refuses it.
 */
import { LOOP_ITERATION_STEPS, type RenderLimits } from "./budget";

interface Node {
  type: string;
  [key: string]: unknown;
}

const isNode = (value: unknown): value is Node =>
  typeof value === "object" && value !== null && typeof (value as { type?: unknown }).type === "string";

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
      case "+": return a + b;
      case "-": return a - b;
      case "*": return a * b;
      case "**": return a ** b;
      case "//": return b === 0 ? null : Math.floor(a / b);
      case "%": return b === 0 ? null : a % b;
      default: return null;
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

/** Why this template would break a render limit whatever the item, or null. */
export function staticLimitProblem(program: { body: unknown[] }, limits: RenderLimits): string | null {
  let problem: string | null = null;
  walk(program.body, (node, loops) => {
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
  }, 1);
  return problem;
}
