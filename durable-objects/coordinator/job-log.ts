/**
 * A job's running record: its counters (meta `counters`, written once per turn however often they
 * change), its event log and the live streams it feeds, and the item total each result's event
 * carries (read again only when a stage's size changes). The store is the truth; this keeps what
 * the coordinator changes on every result in one place.
 */
import { itemStages } from "./store";
import { ZERO, costOut, usageView, type Counters } from "../../src/engine/counters";
import type { EventHub } from "./event-hub";
import type { EventData, EventName } from "../../src/schemas/events";
import type { CoordinatorStore, StageRow } from "./store";
import { stageCompleted, type EventShape, type TaskEvent } from "./event-shapes";

export class JobLog {
  readonly counters: Counters;
  #total: { sizes: number; total: number } | null = null;

  constructor(
    private readonly store: CoordinatorStore,
    private readonly hub: EventHub,
    readonly shape: EventShape,
  ) {
    this.counters = { ...ZERO, ...store.getMeta("counters") };
  }

  /** A finished task's event in the job's shape, its result already serialised. */
  /** A finished task's event; answers its id (its result's JSON is stored there only). */
  taskCompleted(t: Omit<TaskEvent, "completed" | "total">, resultJson: string): number {
    const { name, fields } = this.shape.taskEvent({ ...t, completed: this.counters.completed, total: this.total() });
    return this.#appendWithResult(name, fields, resultJson);
  }

  stageStarted(jobId: string, stage: { name: string; total: number }): void {
    if (this.shape.stageEvents) this.emit("STAGE_STARTED", { job_id: jobId, stage: stage.name, total: stage.total });
  }

  stageCompleted(jobId: string, stage: StageRow): void {
    if (this.shape.stageEvents) this.emit("STAGE_COMPLETED", stageCompleted(jobId, stage));
  }

  bump(delta: Partial<Counters>): void {
    for (const [key, value] of Object.entries(delta) as [keyof Counters, number][]) this.counters[key] += value;
    this.store.setMetaSoon("counters", this.counters);
  }

  emit<K extends EventName>(name: K, data: EventData<K>): void {
    this.hub.publish(this.store.events.append(name, JSON.stringify(data)));
  }

  /** An event whose last field is a result already serialised (the outbox reads it from there: ./event-store.ts); answers its id. */
  emitWithResult<K extends EventName>(name: K, fields: Omit<EventData<K>, "result">, resultJson: string): number {
    return this.#appendWithResult(name, fields, resultJson);
  }

  #appendWithResult(name: EventName, fields: object, resultJson: string): number {
    const event = this.store.events.append(name, `${JSON.stringify(fields).slice(0, -1)},"result":${resultJson}}`);
    this.hub.publish(event);
    return event.id;
  }

  /** The job's items over its stages (a fold's or a corpus's stages too; not agents' subtasks). */
  total(): number {
    if (this.#total?.sizes === this.store.sizesVersion) return this.#total.total;
    const total = itemStages(this.store.stages()).reduce((n, s) => n + s.total, 0);
    this.#total = { sizes: this.store.sizesVersion, total };
    return total;
  }

  summary() {
    const c = this.counters;
    return { completed: c.completed, succeeded: c.succeeded, failed: c.failed, total_attempts: c.total_attempts, usage: usageView(c), cost_usd: costOut(c) };
  }
}
