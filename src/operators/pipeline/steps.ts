/**
 * A pipeline's `steps` as submitted (v2 contract, "POST /v1/pipelines") read into run units: the
 * leaf steps (`llm`, `agent`, `reduce`, and the operators that are step types: `filter`,
 * `classify`, `rank`, `resolve`) in the order they run, nested `sequential` steps flattened (at most
 * MAX_NESTING levels) with their id path kept for failure context. Everything is checked here,
 * each problem a FieldIssue at its exact path (`steps[1].steps[0].batch.items`): ids, fields,
 * references (a name neither an input nor an earlier finished step), context management, batch
 * settings with the contract's messages, templates and schemas (through `taskCall`).
 */
import { InputError, type FieldIssue } from "../../lib/errors";
import type { AgentSpec, CallSpec, ExecutionSpec } from "../../engine/types";
import { AGENT_FIELDS, agentSpec } from "./agent-step";
import { namesRead } from "../../template/jinja";
import { taskCall, type TaskDefaults, type TaskFields } from "../task-call";
import { callOverrideFields } from "../base-fields";
import { MAX_FALLBACKS } from "../../engine/fallbacks";
import { batchItemsProblem, checkBatch, type BatchSettings } from "./batch";
import { effectiveContext, type Context, type ContextSettings } from "./context";
import { IDENTIFIER, IDENTIFIER_RULE, isIdentifier, parseRef, isReference, resolveRef, type Ref } from "./refs";
import { isRecord as isObject } from "../../lib/records";
import { limits } from "../../config";
import { ExecutionSchema } from "../execution-field";
import { OPERATOR_STEPS } from "./operator-steps";
import { atStep, fieldIssues, operatorStepSpec } from "./operator-step-fields";
import { subOperator, subStages, type OperatorUnit } from "./sub-plan";

export const MAX_STEPS = 100;
export const MAX_NESTING = 5;
// Template literals and the names the pipeline's templates are given: a step of that id could not
// be read. Stage names need none: a stage is named by its id path, and the stages made for a step's
// parts (`<path>.input.<name>`, `<path>.inner`) are under a leaf step's path, which no other step
// has (ids are unique), so any id is free of them.
const RESERVED = new Set([
  "accumulated",
  "none",
  "None",
  "true",
  "True",
  "false",
  "False",
  "loop",
  "item",
  "accumulator",
  "current_result",
  "original_input",
  "name",
  "index",
]);
// At the top level only: `?stage=steps` lists the pipeline's steps (the contract), so a top-level step of that id could not be paged.
const TOP_LEVEL_RESERVED = new Set(["steps"]);
const CALL_FIELDS = ["prompt_template", "model", "fallbacks", "system_prompt", "output_schema", "max_tokens", "temperature"];
const COMMON_FIELDS = ["id", "type", "context_management", "inputs"];
const FIELDS: Record<string, string[]> = {
  llm: [...COMMON_FIELDS, ...CALL_FIELDS, "batch", "execution"],
  agent: [...COMMON_FIELDS, ...AGENT_FIELDS, "batch"],
  reduce: [...COMMON_FIELDS, "inputs_from", "initial_value", "inner_task", "reduction_task"],
  sequential: [...COMMON_FIELDS, "steps"],
};
const STEP_TYPES = ["llm", "agent", "reduce", "sequential", ...Object.keys(OPERATOR_STEPS)];
const STEP_TYPE_RULE = `type must be ${STEP_TYPES.slice(0, -1).join(", ")} or ${STEP_TYPES.at(-1)}`;
const INPUT_TASK_FIELDS = ["id", "type", "context_management", "inputs", ...CALL_FIELDS];

export type Binding = { kind: "ref"; ref: Ref } | { kind: "literal"; value: unknown } | { kind: "task"; task: number };

export interface InputTask {
  name: string;
  reads: string[]; // the store's names (and `accumulated`) its template reads: only those are passed
  call: CallSpec;
  context: Context;
  bindings: Record<string, Binding>;
}

export interface Unit {
  id: string;
  path: string; // the id path, e.g. "outer.inner"
  type: "llm" | "agent" | "reduce" | "operator";
  context: Context;
  bindings: Record<string, Binding>;
  inputTasks: InputTask[];
  call: CallSpec | null; // llm
  /** An llm step's `execution` (contract v3): its calls through the provider's batch API; null: the pipeline's. */
  execution?: ExecutionSpec | null;
  agent: AgentSpec | null; // agent
  batch: (BatchSettings & { ref: Ref }) | null;
  reduce: { from: Ref; initialValue: unknown; inner: CallSpec | null; reduction: CallSpec } | null;
  /** A step whose type is an operator (./operator-steps.ts): its spec, and the list it runs over (at most `maxItems`). Absent in specs stored before them. */
  operator?: (OperatorUnit & { from: Ref; maxItems: number; lists?: Ref[] }) | null; // lists: a step of two lists' (a join's), `from` its first
  closes: string[]; // the sequential steps that finish with this one (their output is this one's)
  reads: string[]; // the store's names (and `accumulated`) its templates read: only those are passed
}

type Raw = Record<string, unknown>;

class Reader {
  readonly issues: FieldIssue[] = [];
  readonly units: Unit[] = [];
  readonly known: Set<string>; // names a reference may use here: inputs and finished steps
  readonly ids = new Map<string, string>(); // every step id → its path in the request
  readonly seqPath: string[] = []; // the ids of the sequential steps we are inside
  constructor(
    readonly env: Env,
    readonly defaults: TaskDefaults,
    readonly inputs: Record<string, unknown>,
    readonly pipelineContext: ContextSettings | undefined,
  ) {
    this.known = new Set(Object.keys(inputs));
  }

  issue(path: string, message: string): void {
    this.issues.push({ path, message });
  }

  /** Collects every id first (input tasks' too), so a reference to a later step is told apart from an unknown name. */
  collectIds(steps: unknown, at: string, depth: number): void {
    if (!Array.isArray(steps)) return;
    steps.forEach((step, i) => {
      if (!isObject(step)) return;
      const path = `${at}[${i}]`;
      if (typeof step.id === "string" && isIdentifier(step.id)) {
        if (depth === 0 && TOP_LEVEL_RESERVED.has(step.id))
          this.issue(`${path}.id`, `"${step.id}" is reserved for a top-level step: ?stage=steps lists the pipeline's steps`);
        else this.addId(step.id, `${path}.id`);
      }
      if (isObject(step.inputs)) {
        for (const [name, bound] of Object.entries(step.inputs)) {
          const task = isObject(bound) ? bound.task : undefined;
          if (isObject(task) && typeof task.id === "string" && isIdentifier(task.id)) this.addId(task.id, `${path}.inputs.${name}.task.id`);
        }
      }
      if (step.type === "sequential" && depth < MAX_NESTING) this.collectIds(step.steps, `${path}.steps`, depth + 1);
    });
  }

  addId(id: string, path: string): void {
    if (RESERVED.has(id)) this.issue(path, `"${id}" is reserved: the pipeline's templates are given a variable of that name`);
    else if (this.ids.has(id) || Object.hasOwn(this.inputs, id)) this.issue(path, `the id "${id}" is used twice (step ids and input names are one namespace)`);
    else this.ids.set(id, path);
  }

  ref(text: unknown, path: string): Ref | null {
    if (typeof text !== "string" || !isReference(text)) {
      this.issue(path, "expected a reference like ${name} or ${name.path[0]}");
      return null;
    }
    const parsed = parseRef(text);
    if (!parsed.ok) {
      this.issue(path, parsed.message);
      return null;
    }
    const name = parsed.ref.name;
    if (this.known.has(name)) return parsed.ref;
    if (this.ids.has(name)) this.issue(path, `"${name}" is a step that has not finished at this point: a reference may name only earlier steps`);
    else this.issue(path, `unknown name "${name}": neither a pipeline input nor an earlier step`);
    return null;
  }

  context(value: unknown, path: string): ContextSettings | undefined {
    if (value === undefined || value === null) return undefined;
    if (!isObject(value)) {
      this.issue(path, "expected an object");
      return undefined;
    }
    return readContext(value, path, this.issues);
  }

  bindings(value: unknown, path: string, owner: { tasks: InputTask[] | null; chain: ContextSettings[] }): Record<string, Binding> {
    if (value === undefined || value === null) return {};
    if (!isObject(value)) {
      this.issue(path, "expected an object of named inputs");
      return {};
    }
    const out: Record<string, Binding> = {};
    for (const [name, bound] of Object.entries(value)) {
      const at = `${path}.${name}`;
      if (!isIdentifier(name)) this.issue(at, `an input name is ${IDENTIFIER_RULE}`);
      if (isReference(bound)) {
        const ref = this.ref(bound, at);
        if (ref) out[name] = { kind: "ref", ref };
      } else if (isObject(bound) && Object.hasOwn(bound, "task")) {
        if (!owner.tasks) this.issue(at, "an input task cannot have input tasks of its own");
        else {
          const task = this.inputTask(name, bound.task, `${at}.task`, owner.chain);
          if (task) {
            out[name] = { kind: "task", task: owner.tasks.length };
            owner.tasks.push(task);
          }
        }
      } else out[name] = { kind: "literal", value: bound };
    }
    return out;
  }

  inputTask(name: string, raw: unknown, path: string, chain: ContextSettings[]): InputTask | null {
    if (!isObject(raw)) {
      this.issue(path, "an input task is an llm step: an object with a prompt_template");
      return null;
    }
    if ((raw.type ?? "llm") !== "llm") this.issue(`${path}.type`, "an input task is an llm step");
    // Its id, like a step's, is checked with the others' (collectIds); it names the task only: its output is the bound input.
    if (raw.id !== undefined && (typeof raw.id !== "string" || !isIdentifier(raw.id))) this.issue(`${path}.id`, `id must match ${IDENTIFIER.source}`);
    this.unknownFields(raw, INPUT_TASK_FIELDS, path);
    const own = this.context(raw.context_management, `${path}.context_management`);
    const bindings = this.bindings(raw.inputs, `${path}.inputs`, { tasks: null, chain });
    const call = this.call(raw, path, []);
    if (!call) return null;
    return { name, call, context: effectiveContext("llm", merge(this.pipelineContext, chain), own), bindings, reads: this.reads([call.promptTemplate]) };
  }

  call(raw: Raw, path: string, required: string[]): CallSpec | null {
    if (typeof raw.prompt_template !== "string" || raw.prompt_template.length === 0) {
      this.issue(`${path}.prompt_template`, "a non-empty prompt_template is required");
      return null;
    }
    if (raw.fallbacks !== undefined && !callOverrideFields.fallbacks.safeParse(raw.fallbacks).success) {
      this.issue(`${path}.fallbacks`, `a list of at most ${MAX_FALLBACKS} models ("<provider>/<model>")`);
    }
    return this.guard(() => taskCall(this.env, this.defaults, raw as unknown as TaskFields, path, required));
  }

  /** Template and schema problems are the caller's own codes (template_missing_variable, …): they stop the reading. */
  guard<T>(f: () => T): T | null {
    if (this.issues.length > 0) return null; // report the field problems first
    return f();
  }

  /** The names a step could see that its templates read (checked once templates compiled). */
  reads(templates: string[]): string[] {
    if (this.issues.length > 0) return [];
    const candidates = [...this.known, "accumulated"];
    return [...new Set(templates.flatMap((t) => namesRead(t, candidates)))];
  }

  unknownFields(raw: Raw, allowed: string[], path: string): void {
    for (const key of Object.keys(raw)) {
      if (allowed.includes(key)) continue;
      // Batches do not nest: only a top-level llm or agent step (not an input task, a reduce or a sequential step) has one.
      this.issue(`${path}.${key}`, key === "batch" ? "batch is for llm and agent steps (batches do not nest)" : "unknown field for this step type");
    }
  }

  steps(steps: unknown, at: string, depth: number, chain: ContextSettings[]): void {
    if (!Array.isArray(steps) || steps.length === 0) {
      this.issue(at, "expected a non-empty list of steps");
      return;
    }
    steps.forEach((raw, i) => this.step(raw, `${at}[${i}]`, depth, chain));
  }

  step(raw: unknown, path: string, depth: number, chain: ContextSettings[]): void {
    if (!isObject(raw)) return this.issue(path, "a step is an object");
    const id = raw.id;
    if (typeof id !== "string" || !IDENTIFIER.test(id)) this.issue(`${path}.id`, "id must match ^[a-zA-Z_][a-zA-Z0-9_]*$");
    else if (!isIdentifier(id)) this.issue(`${path}.id`, "id must not be __proto__, constructor or prototype");
    const type = raw.type;
    if (typeof type === "string" && Object.hasOwn(OPERATOR_STEPS, type)) return this.operatorStep(raw, type, path, chain);
    if (type !== "llm" && type !== "agent" && type !== "reduce" && type !== "sequential") return this.issue(`${path}.type`, STEP_TYPE_RULE);
    this.unknownFields(raw, FIELDS[type] as string[], path);
    const own = this.context(raw.context_management, `${path}.context_management`);
    const stepId = typeof id === "string" ? id : "?";
    if (type === "sequential") {
      if (depth >= MAX_NESTING) return this.issue(path, `sequential steps nest at most ${MAX_NESTING} levels`);
      if (raw.inputs !== undefined) this.issue(`${path}.inputs`, "a sequential step has no inputs of its own: bind them on its steps");
      const first = this.units.length;
      this.seqPath.push(stepId);
      this.steps(raw.steps, `${path}.steps`, depth + 1, [...chain, own ?? {}]);
      this.seqPath.pop();
      const last = this.units.at(-1);
      if (last && this.units.length > first) last.closes.push(stepId);
      this.known.add(stepId);
      return;
    }
    const tasks: InputTask[] = [];
    const bindings = this.bindings(raw.inputs, `${path}.inputs`, { tasks, chain });
    const context = effectiveContext(type, merge(this.pipelineContext, chain), own);
    const unit = this.newUnit(stepId, type, context, bindings, tasks);
    if (type === "llm" || type === "agent") {
      if (raw.batch !== undefined) {
        const checked = checkBatch(raw.batch, path, limits(this.env).maxItemsPerJob);
        checked.issues.forEach((i) => this.issues.push(i));
        if (checked.settings) {
          const ref = this.ref(checked.settings.items, `${path}.batch.items`);
          if (ref) {
            unit.batch = { ...checked.settings, ref };
            this.batchFromInputs(ref, `${path}.batch.items`);
          }
        }
      }
      const required = unit.batch ? [unit.batch.as] : [];
      if (type === "llm") {
        unit.call = this.call(raw, path, required);
        unit.execution = this.execution(raw.execution, `${path}.execution`);
      } else {
        const read = this.guard(() => agentSpec(this.env, this.defaults, raw, path, required));
        read?.issues.forEach((i) => this.issues.push(i));
        unit.agent = read?.agent ?? null;
      }
    } else {
      const from = this.ref(raw.inputs_from, `${path}.inputs_from`);
      const inner = isObject(raw.inner_task) ? this.call(raw.inner_task, `${path}.inner_task`, ["item"]) : null;
      if (raw.inner_task !== undefined && raw.inner_task !== null && !isObject(raw.inner_task)) this.issue(`${path}.inner_task`, "expected an object");
      const reduction = isObject(raw.reduction_task) ? this.call(raw.reduction_task, `${path}.reduction_task`, ["accumulator", "current_result"]) : null;
      if (!isObject(raw.reduction_task)) this.issue(`${path}.reduction_task`, "a reduce step needs a reduction_task with a prompt_template");
      if (from && reduction) unit.reduce = { from, initialValue: raw.initial_value ?? null, inner, reduction };
    }
    const templates = [unit.call?.promptTemplate, unit.agent?.promptTemplate, unit.reduce?.inner?.promptTemplate, unit.reduce?.reduction.promptTemplate];
    unit.reads = this.reads(templates.filter((t): t is string => typeof t === "string"));
    this.units.push(unit);
    this.known.add(stepId);
  }

  /**
   * A step whose type is an operator: its list (`inputs_from`), its fields read by the operator
   * (./operator-step-fields.ts), the list checked now when it is the pipeline's inputs.
   */
  /** A step's unit at its place in the sequence, with nothing of its kind yet (its call, agent, batch, reduce or operator is set after). */
  newUnit(id: string, type: Unit["type"], context: Context, bindings: Record<string, Binding>, inputTasks: InputTask[]): Unit {
    const path = [...this.seqPath, id].join(".");
    return { id, path, type, context, bindings, inputTasks, call: null, agent: null, batch: null, reduce: null, closes: [], reads: [] };
  }

  operatorStep(raw: Raw, type: string, path: string, chain: ContextSettings[]): void {
    const step = OPERATOR_STEPS[type] as NonNullable<(typeof OPERATOR_STEPS)[string]>;
    const stepId = raw.id as string;
    fieldIssues(step, raw, path).forEach((i) => this.issues.push(i));
    const own = this.context(raw.context_management, `${path}.context_management`);
    const tasks: InputTask[] = [];
    const bindings = this.bindings(raw.inputs, `${path}.inputs`, { tasks, chain });
    if (tasks.length > 0) this.issue(`${path}.inputs`, "an operator step takes no input tasks: run them as an llm step before it");
    const fields = Object.keys(step.lists ?? { inputs_from: "inputs" });
    const refs = fields.map((field) => this.ref(raw[field], `${path}.${field}`));
    const from = refs.every((r) => r !== null) ? (refs as Ref[]) : null;
    const read = this.guard(() => operatorStepSpec(this.env, this.defaults, step, raw, path));
    read?.issues.forEach((i) => this.issues.push(i));
    const maxItems = limits(this.env).maxItemsPerJob;
    if (from && read?.spec) {
      const paths = fields.map((field) => `${path}.${field}`);
      this.operatorItemsFromInputs(from, paths, path, maxItems, (lists) => step.check?.(read.spec as never, step.lists ? lists : (lists[0] as unknown[])));
    }
    const context = effectiveContext("llm", merge(this.pipelineContext, chain), own);
    const unit = this.newUnit(stepId, "operator", context, bindings, []);
    if (from && read?.spec && this.issues.length === 0) {
      unit.operator = { type, spec: read.spec, from: from[0] as Ref, maxItems, ...(step.lists ? { lists: from } : {}) };
      const { step: s, spec } = subOperator(read.spec, unit.operator);
      const templates = subStages(spec, unit.operator).flatMap((stage) => {
        const work = s.operator.work(spec, stage.name);
        return work.kind === "agent" ? [work.agent.promptTemplate] : [work.call.promptTemplate];
      });
      unit.reads = this.reads(templates);
      unit.execution = read.spec.execution ?? null;
    }
    this.units.push(unit);
    this.known.add(stepId);
  }

  /** An operator step's lists all pointing into the pipeline's inputs are checked now: lists, within the bound, that the operator can run. */
  operatorItemsFromInputs(refs: Ref[], paths: string[], stepPath: string, maxItems: number, check: (lists: unknown[][]) => void): void {
    if (!refs.every((ref) => Object.hasOwn(this.inputs, ref.name))) return;
    const lists: unknown[][] = [];
    for (const [i, ref] of refs.entries()) {
      const path = paths[i] as string;
      const resolved = resolveRef(this.inputs, ref);
      if (!resolved.found) return this.issue(path, `the inputs have nothing at ${resolved.at}`);
      if (!Array.isArray(resolved.value)) return this.issue(path, `${path.slice(path.lastIndexOf(".") + 1)} must point at a list`);
      if (resolved.value.length > maxItems) return this.issue(path, `the list has ${resolved.value.length} items: at most ${maxItems}`);
      lists.push(resolved.value);
    }
    if (this.issues.length > 0) return;
    try {
      check(lists);
    } catch (err) {
      throw atStep(err, stepPath);
    }
  }

  /** An llm step's `execution`, checked like the top level's (null: absent). */
  execution(raw: unknown, path: string): ExecutionSpec | null {
    if (raw === undefined || raw === null) return null;
    const parsed = ExecutionSchema.safeParse(raw);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) this.issue([path, ...issue.path.map(String)].join("."), issue.message);
      return null;
    }
    return { mode: parsed.data.mode, deadlineSecs: parsed.data.deadline_secs };
  }

  /** `batch.items` pointing into the pipeline's inputs is checked now: it must be a list there. */
  batchFromInputs(ref: Ref, path: string): void {
    if (!Object.hasOwn(this.inputs, ref.name)) return;
    const resolved = resolveRef(this.inputs, ref);
    if (!resolved.found) return this.issue(path, `the inputs have nothing at ${resolved.at}`);
    const problem = batchItemsProblem(resolved.value, limits(this.env).maxItemsPerJob);
    if (problem) this.issue(path, problem);
  }
}

/** Later settings win: the pipeline's, then each enclosing sequential step's. */
function merge(pipeline: ContextSettings | undefined, chain: ContextSettings[]): ContextSettings {
  const out: ContextSettings = {};
  for (const settings of [pipeline ?? {}, ...chain]) {
    for (const [key, value] of Object.entries(settings)) if (value !== undefined) (out as Record<string, unknown>)[key] = value;
  }
  return out;
}

const INHERIT = ["full", "none", "subset"];
const FORMATS = ["notes_only", "full_output"];

export function readContext(raw: Raw, path: string, issues: FieldIssue[]): ContextSettings {
  const out: ContextSettings = {};
  for (const [key, value] of Object.entries(raw)) {
    const at = `${path}.${key}`;
    if (key === "inherit_context") {
      if (typeof value === "string" && INHERIT.includes(value)) out.inherit_context = value as Context["inherit"];
      else issues.push({ path: at, message: "inherit_context must be 'full', 'none' or 'subset'" });
    } else if (key === "accumulate_data") {
      if (typeof value === "boolean") out.accumulate_data = value;
      else issues.push({ path: at, message: "accumulate_data must be true or false" });
    } else if (key === "accumulation_format") {
      if (typeof value === "string" && FORMATS.includes(value)) out.accumulation_format = value as Context["format"];
      else issues.push({ path: at, message: "accumulation_format must be 'notes_only' or 'full_output'" });
    } else if (key === "subset") {
      if (Array.isArray(value) && value.length <= MAX_STEPS * 2 && value.every((n) => typeof n === "string" && isIdentifier(n))) out.subset = value as string[];
      else issues.push({ path: at, message: "subset must be a list of input or step names" });
    } else issues.push({ path: at, message: "unknown field of context_management" });
  }
  if (out.inherit_context === "subset" && !out.subset)
    issues.push({ path: `${path}.subset`, message: "inherit_context 'subset' needs the list of names in subset" });
  return out;
}

/** Reads and checks a pipeline's steps; throws a 400 InputError naming every problem found. */
export function readSteps(
  env: Env,
  defaults: TaskDefaults,
  inputs: Record<string, unknown>,
  pipelineContext: ContextSettings | undefined,
  steps: unknown,
): Unit[] {
  const reader = new Reader(env, defaults, inputs, pipelineContext);
  reader.collectIds(steps, "steps", 0);
  reader.steps(steps, "steps", 0, []);
  if (reader.units.length > MAX_STEPS) reader.issue("steps", `a pipeline has at most ${MAX_STEPS} steps (sequential steps' children included)`);
  if (reader.issues.length > 0) {
    const first = reader.issues[0] as FieldIssue;
    throw new InputError("invalid_request", `The pipeline is not valid: ${first.path}: ${first.message}`, reader.issues.slice(0, 50));
  }
  return reader.units;
}
