/**
 * What a dispatch hands its worker: the task's template variables and retry guidance (its claim),
 * and its stage's setup (the work and the provider endpoint, resolved once per round and provider
 * and kept in memory only: it holds a key). Also the operator's read-only view of the store.
 */
import { setupKey, type Operator, type PlanReader, type StageSetup, type StageWork, type TaskClaim } from "../../src/engine/types";
import type { JobSpec } from "../../src/operators/registry";
import { endpointData } from "../../src/llm/call-model";
import { parseModel } from "../../src/llm/models";
import { executorOf } from "../../src/engine/executors";
import type { EndpointData } from "../../src/llm/types";
import { childInput } from "./subtasks";
import { taskView, type CoordinatorStore, type TaskRow } from "./store";

/** The operator's view of the job's tasks and stages. */
export function planReader(store: CoordinatorStore): PlanReader {
  return {
    task: (stage, index) => {
      const row = store.task(stage, index);
      return row ? taskView(row) : undefined;
    },
    extent: (stage) => store.extent(stage),
    open: () => store.open(),
    done: (stage) => store.doneTasks(stage).map(taskView),
    keyed: (stage, keys, limit) => store.index.keyed(stage, keys, limit),
    outputs: (stage, indices) => store.index.outputs(stage, indices),
    stage: (name) => store.stage(name),
  };
}

/** A task's template variables (none for an agent's child: its session has its prompt). */
export function taskVars(spec: JobSpec, op: Operator, store: CoordinatorStore, task: TaskRow): Record<string, unknown> {
  if (store.isChildren(task.stage)) return {};
  return op.vars(spec, { stage: task.stage, index: task.idx, input: JSON.parse(task.input) as unknown }, planReader(store));
}

/** `vars`: the task's variables when the caller has them already (a dispatch whose budget needed them). */
export function claimOf(spec: JobSpec, op: Operator, store: CoordinatorStore, task: TaskRow, vars?: Record<string, unknown>): TaskClaim {
  const child = store.isChildren(task.stage) ? childInput(JSON.parse(task.input)) : null;
  if (child) return { vars: {}, problems: null, subtask: child.spawn };
  return { vars: vars ?? taskVars(spec, op, store, task), problems: task.problems ? (JSON.parse(task.problems) as string[]) : null };
}

/** Stage setups, with each provider's endpoint resolved once per round (`<round>:<provider>`). */
export class Setups {
  readonly #endpoints = new Map<string, Promise<EndpointData | null>>();

  constructor(private readonly env: Env) {}

  /** `work`: a stage of the plan's (children ask for their parents' stage's), on the model its task calls. */
  async get(round: number, work: StageWork): Promise<StageSetup | null> {
    const executor = executorOf(work);
    if (executor.session) return { work, endpoint: null }; // a sub-session resolves its own
    const provider = parseModel(executor.call(work).model).provider;
    const key = setupKey(round, provider);
    let endpoint = this.#endpoints.get(key);
    if (!endpoint) {
      endpoint = endpointData(this.env, work.tenantId, provider);
      this.#endpoints.set(key, endpoint);
      endpoint.catch(() => this.#endpoints.delete(key));
    }
    return { work, endpoint: await endpoint };
  }

  /** A provider's endpoint read already (the job's start reads it for its rate pacer): no second read. */
  prime(round: number, provider: string, endpoint: EndpointData | null): void {
    const key = setupKey(round, provider);
    if (!this.#endpoints.has(key)) this.#endpoints.set(key, Promise.resolve(endpoint));
  }
}
