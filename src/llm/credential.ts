/**
 * Which provider credential a tenant's calls of a model use, as a name for its RatePacer: the
 * tenant's own key (private to it), else the deployment's (shared by every tenant using it). The
 * name is a digest of the provider, key and base URL — never the key itself — and the declared
 * limits come with the tenant's own key only: a tenant cannot lower the shared key's pace for
 * everyone.
 */
import { encryptionKey } from "../config";
import { getCredential } from "../db/providers";
import type { RateLimit } from "../engine/pacing";
import { endpointOf } from "./call-model";
import { parseModel } from "./models";
import type { EndpointData } from "./types";

export interface CredentialRef {
  id: string;
  declared: RateLimit | null;
  /** The endpoint read on the way (null: Workers AI), for the job's stage setups. */
  endpoint: EndpointData | null;
}

async function digest(text: string): Promise<string> {
  const bytes = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  return Array.from(bytes.slice(0, 16), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The declared limits of `model` in a credential's `rate_limits`: its own entry, else `*`. */
export function declaredFor(limits: Record<string, RateLimit> | null | undefined, model: string): RateLimit | null {
  if (!limits) return null;
  return limits[model] ?? limits["*"] ?? null;
}

/** A credential's name: a digest of its provider, key and base URL. */
export const credentialId = (provider: string, endpoint: EndpointData): Promise<string> =>
  digest(`${provider}\u0000${endpoint.apiKey ?? ""}\u0000${endpoint.baseUrl ?? ""}`);

/**
 * A model's calls on one deployment of a pool (contract v4): the model's name, a unit separator
 * (a control character, which no model name may hold) and n, for the n-th deployment after the
 * first — each deployment a credential of its own, with its own rate pacer and circuit; the
 * first's calls keep the model's own name.
 */
const SEPARATOR = "\u001f";
export const deploymentKey = (model: string, deployment = 0): string => (deployment > 0 ? `${model}${SEPARATOR}${deployment}` : model);

/** The model and deployment of a key made by deploymentKey. */
export function splitDeploymentKey(key: string): { model: string; deployment: number } {
  const at = key.lastIndexOf(SEPARATOR);
  const n = at > 0 ? Number(key.slice(at + 1)) : NaN;
  return Number.isInteger(n) && n > 0 ? { model: key.slice(0, at), deployment: n } : { model: key, deployment: 0 };
}

/**
 * The models every one of whose keys (the model's own, or each pool deployment's of it) passes
 * `test`: a model is starved, or down, only when no deployment of it can take its calls.
 */
export function modelsWhereEvery<T>(entries: Iterable<[string, T]>, test: (value: T) => boolean): Set<string> {
  const passed = new Set<string>();
  const failed = new Set<string>();
  for (const [key, value] of entries) (test(value) ? passed : failed).add(splitDeploymentKey(key).model);
  for (const model of failed) passed.delete(model);
  return passed;
}

/** A deployment key as the API shows it: `openai/gpt-6-sol [deployment 2]` (counted from 1, as a user lists them). */
export function keyLabel(key: string): string {
  const { model, deployment } = splitDeploymentKey(key);
  return deployment > 0 ? `${model} [deployment ${deployment + 1}]` : model;
}

/** `key`: a model, or a model's calls on one deployment of a pool (deploymentKey). */
export async function credentialOf(env: Env, tenantId: string, key: string): Promise<CredentialRef> {
  const { model, deployment } = splitDeploymentKey(key);
  const { provider, name } = parseModel(model);
  if (provider === "workers-ai") return { id: "workers-ai", declared: null, endpoint: null };
  const stored = await getCredential(env.DB, encryptionKey(env), tenantId, provider);
  const endpoint = endpointOf(env, provider, stored, deployment);
  const limits = deployment > 0 ? stored?.deployments?.[deployment]?.rateLimits : stored?.rateLimits;
  return { id: await credentialId(provider, endpoint), declared: declaredFor(limits, name), endpoint };
}
