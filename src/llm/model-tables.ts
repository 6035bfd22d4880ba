/**
 * What the deployment's per-model tables share (`PRICES`, ./prices.ts; `MODEL_RETIREMENTS`,
 * ./lifecycle.ts): a JSON object keyed by `<provider>/<model>`, read once per isolate and value,
 * and the rule that a dated snapshot (`gpt-4o-mini-2024-07-18`, `claude-sonnet-4-5-20250929`) is
 * its table model's.
 */
import { readVar } from "../config";
import { ConfigurationError } from "../lib/errors";

const SNAPSHOT = /^(.+)-(\d{4}-\d{2}-\d{2}|\d{8}|latest)$/;

/** The table model a dated snapshot is of (undefined: the name is no snapshot). */
export const snapshotOf = (model: string): string | undefined => SNAPSHOT.exec(model)?.[1];

/** The entries of a variable's JSON object keyed by model; `shape` says what it should look like. */
export function modelEntries(text: string, name: string, shape: string): [string, unknown][] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ConfigurationError(`${name} must be JSON: ${shape}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new ConfigurationError(`${name} must be a JSON object keyed by model`);
  return Object.entries(parsed as Record<string, unknown>);
}

/** The deployment's variable `name`, parsed once per isolate and value (null: unset). */
export function deploymentTable<T>(name: string, parse: (text: string) => T): (env: object) => T | null {
  let cached: { text: string; value: T } | null = null;
  return (env) => {
    const text = readVar(env, name);
    if (!text) return null;
    if (cached?.text !== text) cached = { text, value: parse(text) };
    return cached.value;
  };
}
