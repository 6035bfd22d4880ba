/**
 * Does a parsed Jinja template read the variable `item`? Walks the AST with scopes, so
 * `{{ item.k }}`, `{{ item | upper }}` and `{% for x in item %}` count, while a loop variable
 * named `item` (`{% for item in xs %}`), a macro argument, an attribute name (`x.item`), a keyword
 * argument name or a filter/test name do not.
 */
interface Node {
  type: string;
  [key: string]: unknown;
}

const isNode = (value: unknown): value is Node => typeof value === "object" && value !== null && typeof (value as { type?: unknown }).type === "string";

function bindsName(target: unknown, name: string): boolean {
  if (!isNode(target)) return false;
  if (target.type === "Identifier") return target.value === name;
  if (target.type === "TupleLiteral" || target.type === "ArrayLiteral") {
    return Array.isArray(target.value) && target.value.some((t) => bindsName(t, name));
  }
  return false;
}

function children(node: Node): unknown[] {
  return Object.entries(node)
    .filter(([key]) => key !== "type")
    .map(([, value]) => value);
}

function readsIn(value: unknown, name: string): boolean {
  if (Array.isArray(value)) return readsList(value, name);
  if (value instanceof Map) {
    return [...value.entries()].some(([k, v]) => readsIn(k, name) || readsIn(v, name));
  }
  if (!isNode(value)) return false;
  return reads(value, name);
}

/** A statement list: `{% set item = … %}` shadows `item` for the statements after it. */
function readsList(statements: unknown[], name: string): boolean {
  for (const statement of statements) {
    if (readsIn(statement, name)) return true;
    if (isNode(statement) && statement.type === "Set" && bindsName(statement.assignee, name)) return false;
  }
  return false;
}

function reads(node: Node, name: string): boolean {
  switch (node.type) {
    case "Identifier":
      return node.value === name;
    case "MemberExpression":
      return readsIn(node.object, name) || (node.computed === true && readsIn(node.property, name));
    case "For":
      if (readsIn(node.iterable, name) || readsIn(node.defaultBlock, name)) return true;
      return !bindsName(node.loopvar, name) && readsIn(node.body, name);
    case "Set":
      return (
        readsIn(node.value, name) ||
        (node.value === null && readsIn(node.body, name)) ||
        (isNode(node.assignee) && node.assignee.type === "MemberExpression" && readsIn(node.assignee, name))
      );
    case "Macro": {
      const args = Array.isArray(node.args) ? node.args : [];
      const defaults = args.filter((a) => isNode(a) && a.type === "KeywordArgumentExpression").map((a) => (a as Node).value);
      if (readsIn(defaults, name)) return true;
      const shadowed = args.some((a) => bindsName(a, name) || (isNode(a) && bindsName(a.key, name)));
      return !shadowed && readsIn(node.body, name);
    }
    case "KeywordArgumentExpression":
      return readsIn(node.value, name);
    case "FilterExpression":
    case "FilterStatement":
      return readsIn(node.operand, name) || readsIn(node.body, name) || filterArgsRead(node.filter, name);
    case "TestExpression":
      return readsIn(node.operand, name);
    default:
      return children(node).some((child) => readsIn(child, name));
  }
}

function filterArgsRead(filter: unknown, name: string): boolean {
  return isNode(filter) && filter.type === "CallExpression" && readsIn(filter.args, name);
}

export function templateReads(program: { body: unknown[] }, name: string): boolean {
  return readsList(program.body, name);
}
