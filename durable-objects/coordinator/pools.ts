/**
 * A job's deployment pools (contract v4, "Providers as they fail"): a provider credential that is a
 * pool of deployments (Azure regions, gateways, replicas: PUT /v1/providers/{provider}
 * `deployments`) spreads the job's calls by weight. Each deployment is a credential of its own
 * (src/llm/credential.ts deploymentKey): its own rate pacer, paced by its own declared limits and
 * headers, and its own circuit (./circuits.ts). A call goes, by weight, to a deployment that can
 * take it now (circuit not open, its pacer with room); a stage whose calls share a prefix the
 * provider would cache sticks to one deployment chosen by weight from the stage's name, leaving it
 * only while its circuit is open — spreading would pay for the prefix once per deployment.
 *
 * The pools are read when the job starts (and after a restart, at a provider's first call: until
 * then its calls go to the first deployment, the credential's own endpoint). Bounded: ≤ 8
 * deployments per pool (src/routes/providers.ts), one pool per provider the job calls.
 */
import { encryptionKey } from "../../src/config";
import { getCredential } from "../../src/db/providers";
import type { Provider } from "../../src/llm/models";

/** A string's FNV-1a hash: a stage's stable point on its pool's weights. */
function fnv(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

export class Pools {
  readonly #weights = new Map<string, number[] | null>(); // provider → its pool's weights (null: one endpoint)
  readonly #loading = new Map<string, Promise<void>>();

  constructor(
    private readonly env: Env,
    private readonly tenantId: () => string,
  ) {}

  /** Reads a provider's pool, once per job's life in memory (a failed read is tried again at the next call). */
  load(provider: Provider): Promise<void> {
    if (provider === "workers-ai" || this.#weights.has(provider)) return Promise.resolve();
    let loading = this.#loading.get(provider);
    if (!loading) {
      loading = getCredential(this.env.DB, encryptionKey(this.env), this.tenantId(), provider)
        .then((stored) => {
          this.#weights.set(provider, stored?.deployments && stored.deployments.length > 1 ? stored.deployments.map((d) => d.weight) : null);
        })
        .catch((err: unknown) => console.error(`could not read the ${provider} pool; its calls go to its first deployment`, err))
        .finally(() => this.#loading.delete(provider));
      this.#loading.set(provider, loading);
    }
    return loading;
  }

  /** How many deployments a provider's pool has (1: one endpoint, or not read yet — its read starts now). */
  size(provider: Provider): number {
    if (!this.#weights.has(provider)) void this.load(provider);
    return this.#weights.get(provider)?.length ?? 1;
  }

  /**
   * The deployment a call goes to (0 without a pool): by weight among those `usable` says can take
   * it now — from the stage's own point when `sticky` (the first usable from there on), else at
   * random. When none can, the one it would choose of all: its circuit or pacer then holds the call.
   */
  pick(provider: Provider, stage: string, sticky: boolean, usable: (deployment: number) => boolean, random: () => number = Math.random): number {
    const weights = this.#weights.get(provider);
    if (!weights) {
      if (!this.#weights.has(provider)) void this.load(provider);
      return 0;
    }
    return pickDeployment(weights, stage, sticky, usable, random);
  }
}

/** Pools.pick on a pool's weights (its procedure, apart for its tests). */
export function pickDeployment(weights: number[], stage: string, sticky: boolean, usable: (deployment: number) => boolean, random: () => number): number {
  const all = weights.map((_, i) => i);
  if (sticky) {
    const first = pointIn(weights, all, fnv(stage) % total(weights, all));
    for (let k = 0; k < weights.length; k++) if (usable((first + k) % weights.length)) return (first + k) % weights.length;
    return first;
  }
  const open = all.filter(usable);
  const from = open.length > 0 ? open : all;
  return pointIn(weights, from, random() * total(weights, from));
}

const total = (weights: number[], among: number[]): number => among.reduce((n, i) => n + (weights[i] ?? 0), 0);

/** The deployment of `among` whose share of the summed weights holds `point`. */
function pointIn(weights: number[], among: number[], point: number): number {
  let left = point;
  for (const i of among) {
    left -= weights[i] ?? 0;
    if (left < 0) return i;
  }
  return among[among.length - 1] ?? 0;
}
