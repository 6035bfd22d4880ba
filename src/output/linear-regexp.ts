/**
 * Linear-time matching for the regular expressions of output schemas (`pattern`,
 * `patternProperties`). V8's backtracking engine takes exponential time on patterns such as
 * `^(a+)+$`; RE2 (re2js, a pure-JS port: no code generation, so it runs in workerd) matches in
 * time linear in the input, whatever the pattern.
 *
 * @cfworker/json-schema builds these with `new RegExp(pattern, "u").test(…)` while it validates.
 * `withLinearRegExp` runs a (synchronous) validation with the global `RegExp` bound to an RE2
 * matcher, so every regex it builds is an RE2 one; regex literals, and all code outside the
 * call, keep V8's engine. Synchronous code cannot interleave with other requests, so the swap
 * is never seen elsewhere.
 *
 * RE2 has no lookaround or backreferences: such patterns are refused when the schema is
 * submitted (`linearRegexProblem`). `\s`, `\w`, `.` follow RE2's (ASCII) classes.
 */
import { RE2JS } from "re2js";

const CACHE_MAX = 256; // compiled patterns kept per isolate
const cache = new Map<string, RE2JS>();

function compile(pattern: string): RE2JS {
  let compiled = cache.get(pattern);
  if (!compiled) {
    compiled = RE2JS.compile(RE2JS.translateRegExp(pattern));
    if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value as string);
    cache.set(pattern, compiled);
  }
  return compiled;
}

/** Why this pattern cannot be used (not an ECMAScript regex, or not matchable in linear time), or null. */
export function linearRegexProblem(pattern: string): string | null {
  try {
    new RegExp(pattern, "u");
  } catch {
    return "not a valid regular expression";
  }
  try {
    compile(pattern);
    return null;
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    return `cannot be matched in linear time (lookaround and backreferences are not supported): ${reason}`;
  }
}

class LinearRegExp {
  readonly #compiled: RE2JS;
  constructor(pattern: string) {
    this.#compiled = compile(String(pattern));
  }
  test(input: string): boolean {
    return this.#compiled.matcher(String(input)).find();
  }
}

export function withLinearRegExp<T>(fn: () => T): T {
  const original = globalThis.RegExp;
  globalThis.RegExp = LinearRegExp as unknown as RegExpConstructor;
  try {
    return fn();
  } finally {
    globalThis.RegExp = original;
  }
}
