/**
 * The shape of a template runtime value as Fanout's filters and tests see it (@huggingface/jinja's
 * RuntimeValue, without its classes), and how they read a filter's arguments: by position or by
 * keyword, as Jinja2's signatures allow, with Python's truth of a value.
 */
export interface Value {
  type: string;
  value: unknown;
  toString(): string;
}

export type Kwargs = Map<string, Value>;

/** Argument `i`, or keyword `name`. */
export const arg = (args: Value[], kwargs: Kwargs, i: number, name: string): Value | undefined => args[i] ?? kwargs.get(name);

/** Python's truth of a value (an empty list is false), as the renderer computes it. */
export const truthy = (v: Value): boolean => (v as unknown as { __bool__(): { value: boolean } }).__bool__().value;

/** A boolean argument (by position or keyword), `fallback` when not given. */
export function flag(args: Value[], kwargs: Kwargs, i: number, name: string, fallback: boolean): boolean {
  const v = arg(args, kwargs, i, name);
  return v === undefined ? fallback : truthy(v);
}
