/**
 * An agent session's side of pacing by the provider's rate limits (src/engine/pacing.ts): each
 * turn's call takes one lease of the RatePacer of its credential and model, asked under the
 * session's job (so the job's sessions share the job's fair share with its other calls). A call
 * that finds no lease waits as a throttle does — the session's alarm is set for when the lease
 * comes, and the turn goes on then — so a paced session never meets the 429 it would have.
 *
 * While the pacer knows no limit (it paces nothing), the session asks nothing more, and the first
 * answer that carries rate-limit headers is told to the pacer at once (the session may make no
 * other call, and the job's next sessions should find pacing on). A pacer or a credential that
 * cannot be read leaves the session unpaced: 429s stay back-pressure.
 */
import { credentialOf } from "../../src/llm/credential";
import { ratePacer } from "../../src/objects";
import type { CallCost, RateLimit, RateObservation } from "../../src/engine/pacing";
import type { PacerAnswer } from "../rate-pacer";
import type { SessionSpec } from "../../src/agent/session-state";

export class SessionPacing {
  #credential: { id: string; declared: RateLimit | null } | null | undefined = undefined; // undefined: not read yet; null: none
  #paces: boolean | null = null; // null: not asked yet
  #seen: RateObservation | null = null; // headers of the latest answer, news for the next ask

  constructor(private readonly env: Env) {}

  /** 0: the call may go now (leased, or not paced); else how long to wait for a lease, in ms. */
  async lease(spec: SessionSpec, cost: CallCost): Promise<number> {
    if (this.#paces === false && !this.#seen) return 0;
    const answer = await this.#ask(spec, 1, cost);
    return !answer?.paces || answer.lease.granted >= 1 ? 0 : Math.max(1, answer.lease.waitMs);
  }

  /** An answer's rate-limit headers (a success's or an error's): news for the next ask, or for the pacer now while it paces nothing. */
  async observe(spec: SessionSpec, rate: RateObservation | undefined): Promise<void> {
    if (!rate) return;
    this.#seen = rate;
    if (this.#paces !== true) await this.#ask(spec, 0, { tokens: 0, input: 0, output: 0 });
  }

  async #ask(spec: SessionSpec, calls: number, cost: CallCost): Promise<PacerAnswer | null> {
    const credential = await this.#credentialOf(spec);
    if (!credential) return null;
    const seen = this.#seen;
    this.#seen = null;
    try {
      const news = { seen, answered: seen !== null, ...(this.#paces === null ? { declared: credential.declared } : {}) };
      const answer = await ratePacer(this.env, credential.id, spec.model).ask({ jobId: spec.jobId, tenant: spec.tenantId, calls, cost }, news);
      this.#paces = answer.paces;
      return answer;
    } catch (err) {
      console.error("the rate pacer could not be reached; the session's calls go out unpaced", err);
      this.#paces = false;
      return null;
    }
  }

  async #credentialOf(spec: SessionSpec): Promise<{ id: string; declared: RateLimit | null } | null> {
    if (this.#credential !== undefined) return this.#credential;
    try {
      const { id, declared } = await credentialOf(this.env, spec.tenantId, spec.model);
      this.#credential = { id, declared };
    } catch (err) {
      console.error("could not read the session's credential; its calls are not paced", err);
      this.#credential = null;
    }
    return this.#credential;
  }
}
