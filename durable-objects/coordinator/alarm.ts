/**
 * The coordinator's alarm, and its only owner: the engine's slices say when the job must wake
 * (`want`: a retry's due time, a batch to poll, a webhook to look at again, the next sweep) and
 * the earliest asked for in a turn is armed once, as the turn's last write. Nothing else calls
 * setAlarm or deleteAlarm on a job's coordinator.
 */
import { microtask } from "../../src/lib/microtask";
export class JobAlarm {
  #at: number | null; // when the alarm is set for (null: none)
  #wanted: number | null = null; // the earliest wake asked for in this turn, armed at its end

  constructor(
    private readonly storage: DurableObjectStorage,
    at: number | null,
  ) {
    this.#at = at;
  }

  /** The job must be woken by `at`: no I/O here, the turn's wants are armed together (a microtask, before its writes commit). */
  want(at: number): void {
    if (this.#wanted === null) microtask(() => void this.#arm());
    this.#wanted = Math.min(this.#wanted ?? Infinity, at);
  }

  /** The alarm ran: none is set until a slice wants one. */
  fired(): void {
    this.#at = null;
  }

  /** The job ended: its alarm and this turn's wants are dropped (what its end watches wants one again). */
  async clear(): Promise<void> {
    this.#wanted = null;
    await this.storage.deleteAlarm();
    this.#at = null;
  }

  async #arm(): Promise<void> {
    const at = this.#wanted;
    this.#wanted = null;
    if (at === null || (this.#at !== null && this.#at <= at)) return;
    this.#at = at;
    try {
      await this.storage.setAlarm(at);
    } catch (err) {
      this.#at = null;
      console.error("could not set the alarm; the Queue's wake or the next report will", err);
    }
  }
}
