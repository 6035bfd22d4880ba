/**
 * A job's pacing per model (contract v3: a limiter per credential and model). Most jobs call one
 * model; a cascade's cheaper model, a pipeline step's or a reduce task's own model is another,
 * with its own limits and its own RatePacer — its answers' headers must never set the job's
 * model's limits, nor its calls take that model's leases. One PacingLink (./pacing.ts) per model
 * the job's stages call, made when the job starts and again after a restart; the job's own model's
 * keeps its state in the job's meta, the others beside it (`pacing_models`). The API shows the job's
 * own model's pacing (`pacing`, PACING_CHANGED) with the others' in `pacing.models`. The job's own
 * `rate_limit` bounds all of them together.
 */
import { NO_PACING, type JobPacingView } from "../../src/engine/pacing";
import { credentialOf, keyLabel, modelsWhereEvery } from "../../src/llm/credential";
import type { JobSpecBase as JobSpec, Operator } from "../../src/engine/types";
import { modelChain } from "../../src/engine/fallbacks";
import { executorOf, workOf } from "../../src/engine/executors";
import { OwnLimit, PacingLink, type LinkStore, type PacedJob } from "./pacing";
import type { CoordinatorStore } from "./store";

/** The models the job's call stages use (each has its own rate pacer). */
export function pacedModels(op: Operator, spec: JobSpec, stages: { name: string; kind: string }[]): string[] {
  const models = new Set<string>();
  for (const stage of stages) {
    if (stage.kind === "children") continue;
    const work = workOf(op, spec, stage.name);
    if (!work) continue; // a stage whose tasks the operator finishes itself (a pipeline's steps) calls no model
    const executor = executorOf(work);
    if (executor.paced) for (const model of modelChain(spec, work)) models.add(model); // its fallbacks are paced by their own limits
  }
  return [...models];
}

export class Pacings {
  readonly #links = new Map<string, PacingLink>();
  readonly #own = new OwnLimit();

  readonly #joining = new Set<string>(); // models whose credential is being read

  constructor(
    private readonly env: Env,
    private readonly store: CoordinatorStore,
    /** The job's spec now (a recover may change its model). */
    private readonly spec: () => JobSpec,
    /** The link's job, for its model's calls. */
    private readonly jobFor: (model: string) => PacedJob,
    /** Any model's pacing changed: the job's view now. */
    private readonly onChange: (view: JobPacingView) => void,
  ) {}

  /**
   * The link of a model's calls, made at its first use (after a restart, from what it kept). A
   * model the job did not join at its start (a stage that `auto` moved from batches to realtime)
   * joins now; its calls go out unpaced for the moment that takes.
   */
  of(model: string): PacingLink {
    let link = this.#links.get(model);
    if (!link) {
      const main = model === this.spec().model;
      const store = main ? this.#mainStore() : this.#otherStore(model);
      link = new PacingLink(this.env, store, this.jobFor(model), () => this.onChange(this.view()), model, this.#own);
      this.#links.set(model, link);
      if (!main && store.get().credential === null && !this.#joining.has(model)) void this.#joinOther(this.spec(), model);
    }
    return link;
  }

  /** A model's link if it has one (none is made). */
  peek(model: string): PacingLink | undefined {
    return this.#links.get(model);
  }

  /** The models whose pacer has granted the job nothing for longer than `maxWaitMs` while it wanted calls. */
  starved(now: number, maxWaitMs: number): Set<string> {
    // A pool's model is starved when every deployment of it is (./pools.ts): one with leases takes its calls.
    return modelsWhereEvery(this.#links, (link) => link.starvedFor(now) > maxWaitMs);
  }

  /** The job starts: each model's credential joins its pacer (the job's own model first: it also says the job's endpoint). */
  async join(spec: JobSpec, models: string[], main: { id: string; declared: Parameters<PacingLink["join"]>[2] }): Promise<void> {
    await this.of(spec.model).join(spec, main.id, main.declared);
    for (const model of models) if (model !== spec.model) await this.#joinOther(spec, model);
  }

  async #joinOther(spec: JobSpec, model: string): Promise<void> {
    if (this.#joining.has(model)) return;
    this.#joining.add(model);
    try {
      const credential = await credentialOf(this.env, spec.tenantId, model);
      await this.of(model).join(spec, credential.id, credential.declared);
    } catch (err) {
      console.error(`could not join the rate pacer of ${model}; its calls are not paced`, err);
    } finally {
      this.#joining.delete(model); // it holds only the joins under way
    }
  }

  leave(spec: JobSpec): void {
    const models = new Set([...this.#links.keys(), ...Object.keys(this.store.getMeta("pacing_models") ?? {})]);
    for (const model of models) this.of(model).leave(spec);
  }

  /** What the API shows: the job's own model's pacing, and the other models' in `models`. */
  view(): JobPacingView {
    const main = this.store.getMeta("pacing") ?? NO_PACING;
    const own = this.spec().model;
    const others = Object.entries(this.store.getMeta("pacing_models") ?? {}).filter(([model]) => model !== own);
    return others.length === 0 ? main : { ...main, models: Object.fromEntries(others.map(([model, kept]) => [keyLabel(model), kept.view])) };
  }

  #mainStore(): LinkStore {
    const store = this.store;
    return {
      get: () => ({ credential: store.getMeta("credential") ?? null, paces: store.getMeta("paces") ?? false, view: store.getMeta("pacing") ?? NO_PACING }),
      set: (part) => {
        if (part.credential !== undefined && part.credential !== null) store.setMeta("credential", part.credential);
        if (part.paces !== undefined) store.setMeta("paces", part.paces);
        if (part.view !== undefined) store.setMeta("pacing", part.view);
      },
    };
  }

  #otherStore(model: string): LinkStore {
    const store = this.store;
    const all = () => store.getMeta("pacing_models") ?? {};
    return {
      get: () => all()[model] ?? { credential: null, paces: false, view: NO_PACING },
      set: (part) => {
        const kept = all();
        store.setMeta("pacing_models", { ...kept, [model]: { ...(kept[model] ?? { credential: null, paces: false, view: NO_PACING }), ...part } });
      },
    };
  }
}
