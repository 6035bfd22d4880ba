/**
 * Model names are `<provider>/<model>`. This module knows the providers and parses model strings;
 * an unknown provider prefix is 400 `unknown_provider` before any work starts.
 */
import { InputError } from "../lib/errors";

export const PROVIDERS = ["openai", "anthropic", "openai-compatible", "workers-ai"] as const;
export type Provider = (typeof PROVIDERS)[number];

/** Providers that take an API key (Workers AI uses the AI binding instead). */
export const KEYED_PROVIDERS = ["openai", "anthropic", "openai-compatible"] as const;
export type KeyedProvider = (typeof KEYED_PROVIDERS)[number];

export interface ModelRef {
  provider: Provider;
  name: string;
}

export const isProvider = (value: string): value is Provider => (PROVIDERS as readonly string[]).includes(value);
export const isKeyedProvider = (value: string): value is KeyedProvider => (KEYED_PROVIDERS as readonly string[]).includes(value);

export function unknownProvider(provider: string, path = "model"): InputError {
  return new InputError("unknown_provider", `Unknown provider "${provider}". Use one of: ${PROVIDERS.join(", ")}.`, [
    { path, message: `unknown provider "${provider}"` },
  ]);
}

export function parseModel(model: string): ModelRef {
  const slash = model.indexOf("/");
  const provider = slash > 0 ? model.slice(0, slash) : model;
  const name = slash > 0 ? model.slice(slash + 1) : "";
  if (!isProvider(provider)) throw unknownProvider(provider);
  if (!name) {
    throw new InputError("invalid_request", "The model needs a name after the provider.", [{ path: "model", message: `expected "${provider}/<model name>"` }]);
  }
  return { provider, name };
}
