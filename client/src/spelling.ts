/**
 * The client's spelling of the API: its options are the request schemas of the generated
 * ./api.ts with their keys in camelCase (`Camelize`), and a request body is the options with their
 * keys back in snake_case (`toApi`). Neither restates a field: a field the API gains is an option
 * of the client and is sent, with no line here.
 *
 * The values of OPAQUE keys are the user's own data (items, metadata, JSON Schemas, an initial
 * value), typed and sent as given. A pipeline step's named `inputs` are data too, but an input
 * given as `{task: {...}}` is an input task, re-spelled like any task.
 */

/** `snake_case` → `camelCase`, as a type. */
export type Camel<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<Camel<Tail>>}` : S;

/** Keys (camelCase) whose values are the user's data. */
export const OPAQUE = ["inputs", "metadata", "outputSchema", "initialValue", "inputSchema"] as const;
type Opaque = (typeof OPAQUE)[number];
const opaque: ReadonlySet<string> = new Set(OPAQUE);

/** An API shape in the client's spelling: every key camelCase, all the way down, but under OPAQUE keys. */
export type Camelize<T> = T extends readonly (infer U)[]
  ? Camelize<U>[]
  : T extends object
    ? { [K in keyof T as K extends string ? Camel<K> : K]: K extends string ? (Camel<K> extends Opaque ? T[K] : Camelize<T[K]>) : T[K] }
    : T;

const snake = (key: string): string => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

const isPlain = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Options → a request body: keys in snake_case all the way down but under OPAQUE keys; undefined fields left out (the API reads them as their defaults). */
export function toApi(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toApi);
  if (!isPlain(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (v === undefined) continue;
    out[snake(key)] = opaque.has(key) ? v : toApi(v);
  }
  return out;
}

/** A pipeline step's body: its fields re-spelled, its nested steps too, and its input tasks (`{task: {...}}` among its named inputs). */
export function stepToApi(step: Record<string, unknown>): Record<string, unknown> {
  const body = toApi(step) as Record<string, unknown>;
  if (Array.isArray(step.steps)) body.steps = step.steps.map((s) => stepToApi(s as Record<string, unknown>));
  if (isPlain(step.inputs)) {
    body.inputs = Object.fromEntries(
      Object.entries(step.inputs).map(([name, v]) => [name, isPlain(v) && Object.hasOwn(v, "task") && isPlain(v.task) ? { ...v, task: toApi(v.task) } : v]),
    );
  }
  return body;
}
