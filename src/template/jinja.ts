/**
 * Prompt templates: Jinja2 through @huggingface/jinja (an interpreter: workerd forbids the code
 * generation nunjucks relies on), made to behave like Python Jinja2 with default settings:
 * no trim_blocks/lstrip_blocks, Python's str() of values, and the filters in ./filters.
 * A template is parsed once (`compileTemplate`) and rendered once per item.
 */
import { Environment, Interpreter, parse, tokenize } from "@huggingface/jinja";
import { ApiError } from "../lib/errors";
import { EXTRA_FILTERS, PyFloat } from "./filters";
import { pyStr } from "./python-str";
import { templateReads } from "./references";

type Program = ReturnType<typeof parse>;
type RuntimeValue = ReturnType<Environment["lookupVariable"]>;
interface FilterNode {
  type: string;
  value?: string;
  callee?: { type: string; value?: string };
  args?: unknown[];
}

/** Interpreter internals that TypeScript marks private; we extend them, as a subclass would. */
interface InterpreterInternals {
  applyFilter(operand: RuntimeValue, filter: FilterNode, env: Environment): RuntimeValue;
  evaluateBlock(statements: { type: string }[], env: Environment): RuntimeValue;
  evaluateArguments(args: unknown[], env: Environment): [RuntimeValue[], Map<string, RuntimeValue>];
  evaluate(node: unknown, env: Environment): RuntimeValue;
}

/** Statement nodes whose value is not output (their own output, if any, is already a string). */
const SILENT_STATEMENTS = new Set(["Set", "Macro", "Comment", "Break", "Continue"]);

function toRuntime(value: unknown): RuntimeValue {
  const scratch = new Environment();
  if (value instanceof PyFloat) {
    scratch.set("v", 0.5); // a FloatValue; keep its class, set the real number below
    const float = scratch.lookupVariable("v");
    (float as { value: unknown }).value = value.value;
    return float;
  }
  return scratch.set("v", value);
}

function toPlain(value: RuntimeValue): unknown {
  switch (value.type) {
    case "StringValue":
    case "IntegerValue":
    case "FloatValue":
    case "BooleanValue":
      return value.value;
    case "NullValue":
    case "UndefinedValue":
      return null;
    default:
      return pyStr(value);
  }
}

function filterName(filter: FilterNode): string | undefined {
  if (filter.type === "Identifier") return filter.value;
  if (filter.type === "CallExpression" && filter.callee?.type === "Identifier") return filter.callee.value;
  return undefined;
}

class PythonJinjaInterpreter extends Interpreter {}
const proto = PythonJinjaInterpreter.prototype as unknown as InterpreterInternals;
const base = Interpreter.prototype as unknown as InterpreterInternals;

proto.applyFilter = function (this: InterpreterInternals, operand, filter, env) {
  const name = filterName(filter);
  const extra = name ? EXTRA_FILTERS.get(name) : undefined;
  if (!extra) return base.applyFilter.call(this, operand, filter, env);
  const [args, kwargs] = filter.type === "CallExpression" ? this.evaluateArguments(filter.args ?? [], env) : [[], new Map()];
  const plainKwargs = new Map([...kwargs.entries()].map(([k, v]) => [k, toPlain(v)]));
  return toRuntime(extra(toPlain(operand), args.map(toPlain), plainKwargs));
};

proto.evaluateBlock = function (this: InterpreterInternals, statements, env) {
  let out = "";
  for (const statement of statements) {
    const value = this.evaluate(statement, env);
    if (SILENT_STATEMENTS.has(statement.type)) continue;
    out += pyStr(value);
  }
  return toRuntime(out);
};

export interface CompiledTemplate {
  source: string;
  render(item: unknown): string;
}

function globals(env: Environment): void {
  for (const [name, value] of Object.entries({ true: true, false: false, none: null, True: true, False: false, None: null })) {
    env.set(name, value);
  }
  env.set("range", (start: number, stop?: number, step = 1) => {
    const [from, to] = stop === undefined ? [0, start] : [start, stop];
    const out: number[] = [];
    for (let i = from; step > 0 ? i < to : i > to; i += step) out.push(i);
    return out;
  });
}

function parseSource(source: string, field: string): Program {
  try {
    // Python Jinja2's defaults: keep whitespace around blocks (trim_blocks and lstrip_blocks off).
    return parse(tokenize(source, { lstrip_blocks: false, trim_blocks: false }));
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new ApiError(400, "template_syntax", `The template has a syntax error: ${message}`, {
      details: [{ path: field, message }],
    });
  }
}

/**
 * Parses a template and checks that it reads `variable` (400 `template_missing_item` if not).
 * `field` names the request field in error details.
 */
export function compileTemplate(source: string, field = "prompt_template", variable = "item"): CompiledTemplate {
  const program = parseSource(source, field);
  if (!templateReads(program, variable)) {
    throw new ApiError(400, "template_missing_item", `The template must use the variable \`${variable}\`.`, {
      details: [{ path: field, message: `\`${variable}\` is never read (e.g. {{ ${variable} }})` }],
    });
  }
  return {
    source,
    render(item: unknown): string {
      const env = new Environment();
      globals(env);
      env.set("item", item);
      const result = new PythonJinjaInterpreter(env).run(program);
      return typeof result.value === "string" ? result.value : pyStr(result);
    },
  };
}
