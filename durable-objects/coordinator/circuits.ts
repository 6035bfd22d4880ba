/**
 * A job's circuits, one per model its calls go to (../../src/engine/fallbacks.ts): outage answers
 * in a row to OUTAGES_TO_OPEN different items open a model's circuit for COOL_DOWN_MS, in which the
 * items that have a model after it in their chain go straight there (no call spent on a model that
 * is down) and an item with none waits, as on a 429 (back-pressure), failing `unavailable` once the
 * model has been down longer than `max_wait_secs` (./starved.ts); after the cool-down one call
 * probes it (half-open): an answer closes the circuit, another outage opens it again. Any answer
 * that is not an outage (a success, invalid output, a rate limit) counts as the model being up.
 *
 * A deployment of a pool (./pools.ts) has a circuit of its own per model, keyed as its pacer is
 * (src/llm/credential.ts deploymentKey): an open one is skipped while another can take the call.
 *
 * Kept in the coordinator's memory, per job, and shared through the rate pacer of the credential
 * and model (../rate-pacer.ts): a change (opened, closed) is told to `onChange`, which tells the
 * pacer (and records a pool deployment's for GET /v1/providers); `shared` says until when the
 * pacer last said another job found it open — then it is open here too, without a call of this
 * job's spent to learn it, and a restarted job learns it at its first ask. Bounded by the job's models: its own and its fallbacks (≤ 1 + MAX_FALLBACKS
 * per stage's chain), times the deployments of their pools (≤ 8).
 */
import type { AttemptOutcome } from "../../src/engine/retry-policy";
import { CIRCUIT_COOL_DOWN_MS } from "../../src/db/providers";
import { modelsWhereEvery } from "../../src/llm/credential";

export const OUTAGES_TO_OPEN = 3;
export const COOL_DOWN_MS = CIRCUIT_COOL_DOWN_MS;

export type CircuitState = "closed" | "open" | "half_open";

interface Circuit {
  /** The tasks whose outage answers came in a row (at most OUTAGES_TO_OPEN kept): one item's answers count once. */
  outages: Set<string>;
  openUntil: number; // 0: never opened (or closed since)
  downSince: number; // when it opened first since it was last closed (0: closed)
  probing: boolean; // the half-open circuit's one call is under way
}

export class Circuits {
  readonly #circuits = new Map<string, Circuit>();

  constructor(
    private readonly onChange: (model: string, circuit: "open" | "closed", now: number) => void = () => {},
    private readonly shared: (model: string) => number = () => 0,
  ) {}

  /**
   * A call of task `task` on `model` was answered (or failed): the model's circuit learns whether it
   * is up. Outages of OUTAGES_TO_OPEN different tasks in a row open it — one item whose prompt the
   * provider fails on again and again (a poison input) never does: it meets its own max_retries.
   */
  observe(model: string, outcome: AttemptOutcome, now: number, task: string): void {
    const circuit = this.#of(model);
    const probed = circuit.probing;
    circuit.probing = false;
    const outage = (outcome.kind === "transient" || outcome.kind === "permanent") && outcome.unavailable === "outage";
    if (!outage) {
      const wasOpen = circuit.openUntil !== 0;
      circuit.outages.clear();
      circuit.openUntil = 0;
      circuit.downSince = 0;
      if (wasOpen) this.onChange(model, "closed", now);
      return;
    }
    if (circuit.outages.size < OUTAGES_TO_OPEN) circuit.outages.add(task);
    if (circuit.outages.size < OUTAGES_TO_OPEN && !probed) return;
    const opens = circuit.openUntil === 0 || probed; // opened now, or again after its probe met the outage
    circuit.openUntil = now + COOL_DOWN_MS;
    if (circuit.downSince === 0) circuit.downSince = now;
    if (opens) this.onChange(model, "open", now);
  }

  /** Whether a call may go to `model` now; a half-open circuit lets its one probe through (and counts it as sent). */
  admit(model: string, now: number): boolean {
    const circuit = this.#circuits.get(model);
    if (!circuit || circuit.openUntil === 0) return now >= this.shared(model);
    if (now < circuit.openUntil || circuit.probing) return false;
    circuit.probing = true;
    return true;
  }

  state(model: string, now: number): CircuitState {
    const circuit = this.#circuits.get(model);
    if (!circuit || circuit.openUntil === 0) return now < this.shared(model) ? "open" : "closed";
    return now < circuit.openUntil ? "open" : "half_open";
  }

  /** Until when a model's circuit is open, its own or as the pacer said (0: closed). */
  openUntil(model: string): number {
    return Math.max(this.#circuits.get(model)?.openUntil ?? 0, this.shared(model));
  }

  /** When a task waiting on an open circuit must be looked at again: the cool-down's end, or when the model will have been down `maxWaitMs` (./starved.ts), the sooner. */
  wakeAt(model: string, maxWaitMs: number): number {
    const since = this.#circuits.get(model)?.downSince ?? 0;
    const openUntil = this.openUntil(model);
    return since === 0 ? openUntil : Math.min(openUntil, since + maxWaitMs + 1);
  }

  /**
   * The models this job has found down longer than `maxWaitMs` (open, or half open without an
   * answer since): a model on a pool only when every deployment it called is (keys:
   * src/llm/credential.ts deploymentKey). Their items waited as long as the job lets them.
   */
  downLongerThan(now: number, maxWaitMs: number): Set<string> {
    return modelsWhereEvery(this.#circuits, (circuit) => circuit.openUntil !== 0 && now - circuit.downSince > maxWaitMs);
  }

  #of(model: string): Circuit {
    let circuit = this.#circuits.get(model);
    if (!circuit) this.#circuits.set(model, (circuit = { outages: new Set(), openUntil: 0, downSince: 0, probing: false }));
    return circuit;
  }
}
