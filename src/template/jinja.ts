/**
 * Prompt templates: Jinja2 through @huggingface/jinja (an interpreter: workerd forbids the code
 * generation nunjucks relies on), made to behave like Python Jinja2 with default settings:
 * no trim_blocks/lstrip_blocks, Python's str() of values, and the filters in ./filters.
 * A template is parsed once (`compileTemplate`) and rendered once per item.
 */
import { Environment, Interpreter, parse, tokenize } from "@huggingface/jinja";
import { InputError } from "../lib/errors";
import { boundedRange, DEFAULT_RENDER_LIMITS, RenderBudget, type RenderLimits } from "./render-budget";
import { FILTER_COSTS, FUNCTION_COSTS, METHOD_COSTS, TEST_COSTS, type Declaration } from "./costs";
import { EXTRA_FILTERS, PyFloat } from "./filters";
import { pyStr } from "./python-str";
import { templateReads } from "./references";
import { unsupportedFeatures } from "./features";
import { percentFormat } from "./percent-format";
import { aggregate } from "./aggregates";
import * as more from "./more-filters";
import { staticLimitProblem } from "./static-limits";
import { ARG_TESTS, rewriteArgTests, testOfFilter } from "./arg-tests";
import { PY_TESTS } from "./py-tests";
import * as lists from "./list-filters";
import * as text from "./text-filters";
import { pprint } from "./pprint";
import { arrayOf, filterName, renamed, toPlain, toRuntime, tupleOf, type FilterNode, type RuntimeValue } from "./runtime-values";

type Program = ReturnType<typeof parse>;
interface ForNode {
  type: "For";
  loopvar?: { type: string };
  iterable: { type: string; lhs?: unknown };
}
interface BinaryNode {
  type: "BinaryExpression";
  operator: { value: string };
  left: unknown;
  right: unknown;
}
interface CallNode {
  type: "CallExpression";
  callee: { type: string; computed?: boolean; object?: unknown; property?: { type: string; value?: unknown } };
  args: unknown[];
}

/** Interpreter internals that TypeScript marks private; we extend them, as a subclass would. */
interface InterpreterInternals {
  applyFilter(operand: RuntimeValue, filter: FilterNode, env: Environment): RuntimeValue;
  evaluateTestExpression(node: { operand: unknown; negate: boolean; test: { value: string } }, env: Environment): RuntimeValue;
  evaluateBlock(statements: { type: string }[], env: Environment): RuntimeValue;
  evaluateArguments(args: unknown[], env: Environment): [RuntimeValue[], Map<string, RuntimeValue>];
  evaluate(node: unknown, env: Environment): RuntimeValue;
  evaluateCallExpression(expr: CallNode, env: Environment): RuntimeValue;
  evaluateFor(node: ForNode, env: Environment): RuntimeValue;
  evaluateBinaryExpression(node: BinaryNode, env: Environment): RuntimeValue;
  budget: RenderBudget;
}

/** Statement nodes whose value is not output (their own output, if any, is already a string). */
const SILENT_STATEMENTS = new Set(["Set", "Macro", "Comment", "Break", "Continue"]);

class PythonJinjaInterpreter extends Interpreter {
  readonly budget: RenderBudget;
  constructor(env: Environment, limits: RenderLimits) {
    super(env);
    this.budget = new RenderBudget(limits);
  }
}
const proto = PythonJinjaInterpreter.prototype as unknown as InterpreterInternals;
const base = Interpreter.prototype as unknown as InterpreterInternals;
const SCRATCH = "__fanout_call_target";
const LOOKUPS = new Set(["Identifier", "MemberExpression"]);

/**
 * Charges the declared cost (./costs) of the call `name` in `table` before it runs. A name with no
 * declaration is never run: submission refuses the filters and tests it does not know (./features),
 * so reaching here without one is a renderer defect, reported as such.
 */
function chargeCall(
  budget: RenderBudget,
  table: Readonly<Record<string, Declaration>>,
  kind: string,
  name: string,
  operand: RuntimeValue,
  args: RuntimeValue[],
  kwargs: Map<string, RuntimeValue>,
): void {
  const declared = Object.hasOwn(table, name) ? table[name] : undefined;
  if (!declared) throw new Error(`the ${kind} '${name}' has no cost declaration`);
  budget.charge(
    kind === "test" ? `the test '${name}'` : `${name}()`,
    declared({ operand: operand as more.Value, args: args as more.Value[], kwargs: kwargs as Map<string, more.Value>, cap: budget.limits.maxOutputChars }),
  );
}

/** Binds evaluated values to fresh names in `scope`, so the interpreter can be handed nodes that only look them up. */
function bound(scope: Environment, prefix: string, args: RuntimeValue[], kwargs: Map<string, RuntimeValue>): unknown[] {
  const nodes: unknown[] = args.map((a, i) => {
    scope.setVariable(`${prefix}${i}`, a);
    return { type: "Identifier", value: `${prefix}${i}` };
  });
  for (const [key, v] of kwargs) {
    scope.setVariable(`${prefix}kw_${key}`, v);
    nodes.push({ type: "KeywordArgumentExpression", key: { type: "Identifier", value: key }, value: { type: "Identifier", value: `${prefix}kw_${key}` } });
  }
  return nodes;
}

proto.evaluate = function (this: InterpreterInternals, node, env) {
  const budget = this.budget;
  budget.enter();
  try {
    const value = base.evaluate.call(this, node, env);
    if (LOOKUPS.has((node as { type?: string } | undefined)?.type ?? "")) return value; // an existing value, already paid for
    if (value.type === "StringValue") budget.chars((value.value as string).length);
    else if (value.type === "ArrayValue" || value.type === "TupleValue") budget.list((value.value as unknown[]).length);
    return value;
  } finally {
    budget.leave();
  }
};

/** Loops are charged for every iteration before they start. The iterable is evaluated once. */
/** The renderer unpacks only lists in `for a, b in …`: tuples (dictsort, items, groupby) are unpacked as lists. */
function unpackable(iterable: RuntimeValue): RuntimeValue {
  if (iterable.type !== "ArrayValue" || !(iterable.value as RuntimeValue[]).some((v) => v.type === "TupleValue")) return iterable;
  return arrayOf((iterable.value as more.Value[]).map((v) => (v.type === "TupleValue" ? arrayOf(v.value as more.Value[]) : v))) as RuntimeValue;
}

proto.evaluateFor = function (this: InterpreterInternals, node, env) {
  const select = node.iterable.type === "SelectExpression";
  const evaluated = this.evaluate(select ? node.iterable.lhs : node.iterable, env);
  const iterable = node.loopvar?.type === "TupleLiteral" ? unpackable(evaluated) : evaluated;
  const size =
    iterable.type === "ArrayValue" ? (iterable.value as unknown[]).length : iterable.type === "ObjectValue" ? (iterable.value as Map<string, unknown>).size : 0;
  this.budget.loop(size);
  const scope = new Environment(env);
  scope.setVariable(SCRATCH, iterable);
  const bound = { type: "Identifier", value: SCRATCH };
  return base.evaluateFor.call(this, { ...node, iterable: select ? { ...node.iterable, lhs: bound } : bound }, scope);
};

/** A method (`s.split(',')`) or a global function (`range(n)`): its cost charged before the call, its operands evaluated once. */
proto.evaluateCallExpression = function (this: InterpreterInternals, expr, env) {
  const callee = expr.callee;
  const method = callee.type === "MemberExpression" && !callee.computed && typeof callee.property?.value === "string";
  const functionName = callee.type === "Identifier" ? (callee as { value?: string }).value : undefined;
  if (!method && !(functionName && Object.hasOwn(FUNCTION_COSTS, functionName))) return base.evaluateCallExpression.call(this, expr, env);
  const scope = new Environment(env);
  const target = method ? this.evaluate(callee.object, env) : toRuntime(null);
  const [args, kwargs] = this.evaluateArguments(expr.args, env);
  const name = method ? String(callee.property?.value) : (functionName as string);
  const table = method ? METHOD_COSTS : FUNCTION_COSTS;
  // A dict's own value called as a method (a user's data is never a function) is left to the interpreter's error.
  if (!method || Object.hasOwn(METHOD_COSTS, name)) chargeCall(this.budget, table, method ? "method" : "function", name, target, args, kwargs);
  scope.setVariable(SCRATCH, target);
  const rebound: CallNode = {
    ...expr,
    args: bound(scope, "__fanout_arg", args, kwargs),
    callee: method ? { ...callee, object: { type: "Identifier", value: SCRATCH } } : callee,
  };
  return base.evaluateCallExpression.call(this, rebound, scope);
};

const CONTAINERS = new Set(["ArrayValue", "TupleValue", "ObjectValue"]);

/**
 * `x in y` and `x not in y` scan `y` (a list's elements, a string's characters): charged as the
 * test `in` is (./costs), per element, before the scan; the operands are evaluated once.
 */
proto.evaluateBinaryExpression = function (this: InterpreterInternals, node, env) {
  const op = node.operator.value;
  if (op !== "in" && op !== "not in" && op !== "==" && op !== "!=") return base.evaluateBinaryExpression.call(this, node, env);
  const left = this.evaluate(node.left, env);
  const right = this.evaluate(node.right, env);
  if (op === "==" || op === "!=") {
    // The interpreter compares with JavaScript's `==`, which turns a list into a string (all of it, each
    // time) to compare it with a number: a container equals only itself, as the interpreter's lists do.
    if (!CONTAINERS.has(left.type) && !CONTAINERS.has(right.type)) return toRuntime(op === "==" ? left.value == right.value : left.value != right.value);
    return toRuntime((left.value === right.value) === (op === "=="));
  }
  chargeCall(this.budget, TEST_COSTS, "test", "in", left, [right], new Map());
  const scope = new Environment(env);
  scope.setVariable("__fanout_left", left);
  scope.setVariable("__fanout_right", right);
  return base.evaluateBinaryExpression.call(
    this,
    { ...node, left: { type: "Identifier", value: "__fanout_left" }, right: { type: "Identifier", value: "__fanout_right" } },
    scope,
  );
};

proto.evaluateTestExpression = function (this: InterpreterInternals, node, env) {
  const operand = this.evaluate(node.operand, env);
  chargeCall(this.budget, TEST_COSTS, "test", node.test.value, operand, [], new Map());
  const test = PY_TESTS.get(node.test.value);
  if (test) return toRuntime(node.negate ? !test(operand) : test(operand));
  const scope = new Environment(env);
  scope.setVariable(SCRATCH, operand);
  return base.evaluateTestExpression.call(this, { ...node, operand: { type: "Identifier", value: SCRATCH } }, scope);
};

/** The list filters' view of the renderer: value constructors, tests and filters by name. */
function listRuntime(self: InterpreterInternals, env: Environment): lists.Runtime {
  return {
    arrayOf,
    tupleOf,
    plain: (value) => toRuntime(value) as more.Value,
    undefinedValue: () => env.lookupVariable("__fanout_undefined") as more.Value,
    builtinTest: (name) => (PY_TESTS.get(name) ?? env.tests.get(name)) as ((v: more.Value) => boolean) | undefined,
    filter: (value, name, args, kwargs) => {
      // `value | name(args)`: the evaluated arguments are bound in a scope of their own and passed by name.
      const scope = new Environment(env);
      const argNodes = bound(scope, "__fanout_arg", args as RuntimeValue[], kwargs as Map<string, RuntimeValue>);
      // Without arguments, a plain name: the renderer treats `x | upper` and `x | upper()` differently.
      const node: FilterNode =
        argNodes.length === 0 ? { type: "Identifier", value: name } : { type: "CallExpression", callee: { type: "Identifier", value: name }, args: argNodes };
      return self.applyFilter(value as RuntimeValue, node, scope) as more.Value;
    },
  };
}

/** Filters on runtime values with Python's semantics (./list-filters, ./text-filters, ./arg-tests). */
function pythonFilter(
  self: InterpreterInternals,
  name: string,
  operand: RuntimeValue,
  args: RuntimeValue[],
  kwargs: Map<string, RuntimeValue>,
  env: Environment,
): RuntimeValue | null {
  const v = operand as more.Value;
  const a = args as more.Value[];
  const k = kwargs as Map<string, more.Value>;
  const asTest = testOfFilter(name);
  if (asTest) {
    if (!a[0]) throw new Error(`the test '${asTest.test}' needs an argument`);
    const result = (ARG_TESTS.get(asTest.test) as (x: more.Value, y: more.Value) => boolean)(v, a[0]);
    return toRuntime(asTest.negate ? !result : result);
  }
  const rt = () => listRuntime(self, env);
  switch (name) {
    case "select":
    case "reject":
      return lists.select(rt(), v, a, name === "select") as RuntimeValue;
    case "selectattr":
    case "rejectattr":
      return lists.selectAttr(rt(), v, a, name === "selectattr") as RuntimeValue;
    case "groupby":
      return lists.groupby(rt(), v, a, k) as RuntimeValue;
    case "unique":
      return lists.unique(rt(), v, a, k) as RuntimeValue;
    case "map":
      return lists.map(rt(), v, a, k) as RuntimeValue;
    case "dictsort":
      return lists.dictsort(rt(), v, a, k) as RuntimeValue;
    case "items":
      return lists.itemsFilter(rt(), v) as RuntimeValue;
    case "wordwrap":
      return toRuntime(text.wordwrap(v, a, k));
    case "pprint":
      return toRuntime(pprint(v));
    case "striptags":
      return toRuntime(text.striptags(v));
    case "xmlattr":
      return toRuntime(text.xmlattr(v, a, k));
    case "tojson":
      return toRuntime(text.tojson(v, a, k));
    case "trim":
      return toRuntime(text.trim(v, a, k));
    case "int": {
      const n = text.toInt(v, a, k);
      return typeof n === "number" ? toRuntime(n) : (n as RuntimeValue);
    }
    case "string":
      return toRuntime(pyStr(operand));
    case "list":
      return operand.type === "ArrayValue" ? operand : (arrayOf(lists.listOf(v)) as RuntimeValue);
    case "reverse":
      return operand.type === "StringValue" ? toRuntime(text.reverseString(v)) : null;
    default:
      return null;
  }
}

proto.applyFilter = function (this: InterpreterInternals, operand, filter, env) {
  const name = filterName(filter);
  if (name === undefined) return base.applyFilter.call(this, operand, filter, env);
  const [args, kwargs] = filter.type === "CallExpression" ? this.evaluateArguments(filter.args ?? [], env) : [[], new Map()];
  const asTest = testOfFilter(name);
  if (asTest) chargeCall(this.budget, TEST_COSTS, "test", asTest.test, operand, args, kwargs);
  else chargeCall(this.budget, FILTER_COSTS, "filter", name, operand, args, kwargs);
  // The interpreter's own filters evaluate their arguments again: hand them the values, not the expressions.
  const byInterpreter = (node: FilterNode): RuntimeValue => {
    const scope = new Environment(env);
    const rebound: FilterNode = node.type === "CallExpression" ? { ...node, args: bound(scope, "__fanout_farg", args, kwargs) } : node;
    return base.applyFilter.call(this, operand, rebound, scope);
  };
  const python = pythonFilter(this, name, operand, args, kwargs, env);
  if (python) return python;
  if (name === "format") return toRuntime(percentFormat(pyStr(operand), args, kwargs));
  if (name === "batch") return more.batch(operand, args, kwargs, arrayOf) as RuntimeValue;
  if (name === "slice") return more.slice(operand, args, kwargs, arrayOf) as RuntimeValue;
  if (name === "urlencode") return toRuntime(more.urlencode(operand));
  if (name === "filesizeformat") return toRuntime(more.filesizeformat(operand, args, kwargs));
  if (name === "count" || name === "d") return byInterpreter(renamed(filter, name === "count" ? "length" : "default"));
  if (name === "sum" || name === "min" || name === "max") {
    const result = aggregate(name, operand, args, kwargs);
    if (result.type === "UndefinedValue") return env.lookupVariable("__fanout_undefined"); // min/max of nothing
    if (result.type === "FloatValue") return toRuntime(new PyFloat(result.value as number));
    return result.type === "IntegerValue" && name === "sum" ? toRuntime(result.value) : (result as unknown as RuntimeValue);
  }
  const extra = EXTRA_FILTERS.get(name);
  if (!extra) return byInterpreter(filter);
  const plainKwargs = new Map([...kwargs.entries()].map(([k, v]) => [k, toPlain(v)]));
  return toRuntime(extra(toPlain(operand), args.map(toPlain), plainKwargs));
};

proto.evaluateBlock = function (this: InterpreterInternals, statements, env) {
  let out = "";
  for (const statement of statements) {
    const value = this.evaluate(statement, env);
    if (SILENT_STATEMENTS.has(statement.type)) continue;
    out += pyStr(value);
    this.budget.chars(out.length);
  }
  return toRuntime(out);
};

export interface CompiledTemplate {
  source: string;
  /** Renders with `item` bound (v1 operators). */
  render(item: unknown): string;
  /** Renders with every variable in `vars` bound; `meter` (when given) gains the steps of work the render did, whether it ended or failed. */
  renderVars(vars: Record<string, unknown>, meter?: RenderMeter): string;
}

/** Steps of work added up over many renders: what bounds the renders of one request or alarm (src/engine/work-budget.ts). */
export interface RenderMeter {
  steps: number;
}

function globals(env: Environment, limits: RenderLimits): void {
  for (const [name, value] of Object.entries({ true: true, false: false, none: null, True: true, False: false, None: null })) {
    env.set(name, value);
  }
  env.set("range", (start: number, stop?: number, step = 1) => boundedRange(limits, start, stop, step));
}

function parseSource(source: string, field: string): Program {
  try {
    // Python Jinja2's defaults: keep whitespace around blocks (trim_blocks and lstrip_blocks off).
    const tokens = tokenize(source, { lstrip_blocks: false, trim_blocks: false });
    return parse(rewriteArgTests(tokens, (value, type) => ({ value, type }) as (typeof tokens)[number]));
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new InputError("template_syntax", `The template has a syntax error: ${message}`, [{ path: field, message }]);
  }
}

/** v1 operators name a missing `item` with their own code; v2 operators use `template_missing_variable`. */
export type MissingCode = "template_missing_item" | "template_missing_variable";

/**
 * Parses a template and checks that it reads each of `required` (400 `template_missing_item` or
 * `template_missing_variable`, naming the variable) and that no render could stay within `limits`
 * whatever the input (400 `invalid_request`). `field` names the request field in error details.
 * Each render is bounded by `limits`.
 */
/** Which of `names` a template reads (a variable no template reads need not be passed to it). */
export function namesRead(source: string, names: Iterable<string>): string[] {
  const program = parseSource(source, "prompt_template");
  return [...names].filter((name) => templateReads(program, name));
}

export function compileTemplate(
  source: string,
  field = "prompt_template",
  required: string | string[] = "item",
  limits: RenderLimits = DEFAULT_RENDER_LIMITS,
  missingCode: MissingCode = "template_missing_item",
): CompiledTemplate {
  const program = parseSource(source, field);
  const unsupported = unsupportedFeatures(program);
  if (unsupported.length > 0) {
    const message = `${unsupported.join(", ")} ${unsupported.length === 1 ? "is" : "are"} not supported (docs/limits-and-errors.md lists what is)`;
    throw new InputError("unsupported_template_feature", `The template uses what the renderer does not have: ${message}.`, [{ path: field, message }]);
  }
  const overLimit = staticLimitProblem(program, limits);
  if (overLimit) {
    throw new InputError("invalid_request", `The template cannot render within this deployment's limits: ${overLimit}.`, [{ path: field, message: overLimit }]);
  }
  for (const variable of typeof required === "string" ? [required] : required) {
    if (templateReads(program, variable)) continue;
    throw new InputError(missingCode, `The template \`${field}\` must use the variable \`${variable}\`.`, [
      { path: field, message: `\`${variable}\` is never read (e.g. {{ ${variable} }})` },
    ]);
  }
  const renderVars = (vars: Record<string, unknown>, meter?: RenderMeter): string => {
    const env = new Environment();
    globals(env, limits);
    for (const [name, value] of Object.entries(vars)) env.set(name, value);
    const interpreter = new PythonJinjaInterpreter(env, limits);
    try {
      const result = interpreter.run(program);
      return typeof result.value === "string" ? result.value : pyStr(result);
    } finally {
      if (meter) meter.steps += interpreter.budget.steps;
    }
  };
  return { source, render: (item) => renderVars({ item }), renderVars };
}
