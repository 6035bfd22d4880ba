/**
 * The reference spec's XML task format read into a POST /v1/pipelines body (the same checks then
 * apply). The mapping:
 * - the root `<task>` is the pipeline: `type="sequential"` (its `<steps>`), `type="reduce"` (one
 *   reduce step) or an atomic task (one llm step); its attributes, or the query string, give the
 *   pipeline-level fields (`model`, `max_retries`, …; the attribute wins); `<inputs>` on a
 *   sequential root are the pipeline's named inputs (a value that parses as JSON is JSON);
 * - an atomic `<task>` is an `llm` step: `<description>` is its prompt template, and each
 *   declared input is appended to it (a line `name: value`) so the model sees it; `<input
 *   from="ref"/>` binds a reference, a text value a literal, a nested `<task>` an input task;
 * - `<context_management>` as in the spec (`fresh_context` has no counterpart here: ignored);
 * - `<task type="reduce">`: `<inputs>` with named values (or `<inputs from="ref"/>`),
 *   `<initial_value>`, `<inner_task>` and `<reduction_task>`. Their empty `<input>`s are what the
 *   operator provides (the current item; `current_result`, `accumulator`, `original_input`); their
 *   other inputs are the reduce step's own (input tasks run once, before the fold);
 * - extensions: `id`, `model`, `temperature`, `max_tokens` attributes on any task,
 *   `<output_schema>` (JSON), `<system_prompt>`, `<batch items=".." as=".." error_handling=".."
 *   max_concurrent=".."/>`. Ids are `step_1`, `step_2`, … in document order where none is given.
 */
import { InputError } from "../../lib/errors";
import { jsonShape, MAX_JSON_DEPTH, MAX_JSON_MEMBERS } from "../../lib/json-depth";
import type { XmlElement } from "./xml";

type Json = Record<string, unknown>;
const NUMERIC = new Set(["max_retries", "timeout_secs", "concurrency", "temperature", "max_tokens"]);
const TEXT_FIELDS = ["model", "system_prompt", "retry_guidance"];
const JSON_FIELDS = ["inputs", "context_management", "metadata", "webhook", "token_budget"];
const TASK_ATTRIBUTES = ["id", "model", "temperature", "max_tokens"];
const FOLD_VARIABLES = ["current_result", "accumulator", "original_input"];

function refused(path: string, message: string): never {
  throw new InputError("invalid_request", `The XML task is not valid: ${path}: ${message}`, [{ path, message }]);
}

const child = (e: XmlElement, tag: string) => e.children.find((c) => c.tag === tag);
const children = (e: XmlElement | undefined, tag: string) => (e ? e.children.filter((c) => c.tag === tag) : []);

/** JSON text from the document, held to the JSON bodies' depth bound (./lib/json-depth) before it is parsed. */
function parseJson(text: string, where: string): unknown {
  const { depth, widest } = jsonShape(text);
  if (depth > MAX_JSON_DEPTH) refused(where, `its JSON nests more than ${MAX_JSON_DEPTH} levels deep`);
  if (widest > MAX_JSON_MEMBERS) refused(where, `its JSON holds more than ${MAX_JSON_MEMBERS} members in one array or object`);
  return JSON.parse(text) as unknown;
}

/** A text value: JSON when it parses as JSON, else the string. */
function value(text: string, where: string): unknown {
  try {
    return parseJson(text, where);
  } catch (err) {
    if (err instanceof InputError) throw err;
    return text;
  }
}

const asRef = (from: string) => (/^\$\{.+\}$/.test(from) ? from : `\${${from}}`);
const show = (name: string, expression = name) => `\n${name}: {{ ${expression} if ${expression} is string else (${expression} | tojson) }}`;

/** The pipeline-level fields from the query string, then the root's attributes. */
function pipelineFields(root: XmlElement, query: Record<string, string>): Json {
  const out: Json = {};
  const take = (name: string, raw: string, where: string) => {
    if (NUMERIC.has(name)) {
      const n = Number(raw);
      if (raw.trim() === "" || !Number.isFinite(n)) refused(where, `${name} must be a number`);
      out[name] = n;
    } else if (JSON_FIELDS.includes(name)) {
      try {
        out[name] = parseJson(raw, where);
      } catch (err) {
        if (err instanceof InputError) throw err;
        refused(where, `${name} must be JSON`);
      }
    } else if (TEXT_FIELDS.includes(name)) out[name] = raw;
  };
  for (const [name, raw] of Object.entries(query)) if (name !== "dry_run" && name !== "wait") take(name, raw, `?${name}`);
  for (const [name, raw] of Object.entries(root.attributes)) {
    if (name === "type" || name === "id") continue;
    if (!NUMERIC.has(name) && !TEXT_FIELDS.includes(name) && !JSON_FIELDS.includes(name)) refused(`task@${name}`, "not a pipeline field");
    take(name, raw, `task@${name}`);
  }
  return out;
}

class Converter {
  #count = 0;

  id(task: XmlElement): string {
    this.#count++;
    return task.attributes.id ?? `step_${this.#count}`;
  }

  context(task: XmlElement, path: string): Json | undefined {
    const element = child(task, "context_management");
    if (!element) return undefined;
    const out: Json = {};
    for (const setting of element.children) {
      if (setting.tag === "fresh_context") continue; // no associative context matching here
      if (setting.tag === "accumulate_data") {
        if (setting.text !== "true" && setting.text !== "false") refused(`${path}/context_management/accumulate_data`, "true or false");
        out.accumulate_data = setting.text === "true";
      } else if (setting.tag === "subset") {
        out.subset =
          setting.children.length > 0
            ? setting.children.map((c) => c.text)
            : setting.text
                .split(",")
                .map((s) => s.trim())
                .filter(Boolean);
      } else out[setting.tag] = setting.text;
    }
    return out;
  }

  /** An atomic task's own fields: its call, its attributes, its extensions. */
  call(task: XmlElement, path: string, prompt: string): Json {
    const out: Json = { prompt_template: prompt };
    for (const [name, raw] of Object.entries(task.attributes)) {
      if (name === "type" || name === "id") continue;
      if (!TASK_ATTRIBUTES.includes(name)) refused(`${path}@${name}`, "unknown attribute");
      out[name] = NUMERIC.has(name) ? Number(raw) : raw;
    }
    const schema = child(task, "output_schema");
    if (schema) {
      try {
        out.output_schema = parseJson(schema.text, `${path}/output_schema`);
      } catch (err) {
        if (err instanceof InputError) throw err;
        refused(`${path}/output_schema`, "must be a JSON Schema (JSON text)");
      }
    }
    const system = child(task, "system_prompt");
    if (system) out.system_prompt = system.text;
    return out;
  }

  /** One `<input>`: a reference, a literal, an input task, or (null) a placeholder the operator fills. */
  binding(input: XmlElement, path: string): unknown {
    if (input.attributes.from) return asRef(input.attributes.from);
    const task = child(input, "task");
    if (task) return { task: this.inputTask(task, `${path}/task`) };
    return input.text === "" ? null : value(input.text, path);
  }

  inputTask(task: XmlElement, path: string): Json {
    const { bindings, prompt } = this.declared(task, path, "");
    return { ...this.call(task, path, prompt), ...(Object.keys(bindings).length > 0 ? { inputs: bindings } : {}) };
  }

  /** A task's declared inputs as bindings, and its prompt: the description with each input appended. */
  declared(task: XmlElement, path: string, extra: string): { bindings: Json; prompt: string } {
    const bindings: Json = {};
    let prompt = child(task, "description")?.text ?? "";
    for (const [i, input] of children(child(task, "inputs"), "input").entries()) {
      const name = input.attributes.name;
      const at = `${path}/inputs/input[${i + 1}]`;
      if (!name) refused(at, "an input needs a name");
      const bound = this.binding(input, at);
      if (bound === null) refused(at, 'an input needs from="…", a value or a <task>');
      bindings[name] = bound;
      prompt += show(name);
    }
    return { bindings, prompt: prompt + extra };
  }

  step(task: XmlElement, path: string): Json {
    const type = task.attributes.type ?? (child(task, "steps") ? "sequential" : "atomic");
    const id = this.id(task);
    const context = this.context(task, path);
    const common = { id, ...(context ? { context_management: context } : {}) };
    if (type === "sequential") {
      const steps = children(child(task, "steps"), "task").map((t, i) => this.step(t, `${path}/steps/task[${i + 1}]`));
      return { ...common, type: "sequential", steps };
    }
    if (type === "reduce") return { ...common, ...this.reduce(task, path, id) };
    if (type !== "atomic" && type !== "llm") refused(`${path}@type`, "sequential, reduce or atomic");
    const batch = child(task, "batch");
    const alias = batch?.attributes.as ?? "item";
    const { bindings, prompt } = this.declared(task, path, batch ? show(alias) : "");
    const out: Json = { ...common, type: "llm", ...this.call(task, path, prompt), ...(Object.keys(bindings).length > 0 ? { inputs: bindings } : {}) };
    if (batch) {
      const b = batch.attributes;
      out.batch = {
        ...(b.items !== undefined ? { items: b.items } : {}),
        ...(b.as ? { as: b.as } : {}),
        ...(b.error_handling ? { error_handling: b.error_handling } : {}),
        ...(b.max_concurrent ? { max_concurrent: Number(b.max_concurrent) } : {}),
      };
    }
    return out;
  }

  /** The reduce step, and the named inputs it folds (they become a pipeline input `<id>_inputs`). */
  reduceInputs: Json = {};

  reduce(task: XmlElement, path: string, id: string): Json {
    const inputs = child(task, "inputs");
    let inputsFrom: string;
    if (inputs?.attributes.from) inputsFrom = asRef(inputs.attributes.from);
    else {
      const named: Json = {};
      for (const [i, input] of children(inputs, "input").entries()) {
        if (!input.attributes.name) refused(`${path}/inputs/input[${i + 1}]`, "an input needs a name");
        named[input.attributes.name] = value(input.text, `${path}/inputs/input[${i + 1}]`);
      }
      this.reduceInputs[`${id}_inputs`] = named;
      inputsFrom = `\${${id}_inputs}`;
    }
    const own: Json = {};
    const part = (tag: string, operatorVariables: string[]): Json | null => {
      const element = child(task, tag);
      if (!element) return null;
      const at = `${path}/${tag}`;
      let prompt = child(element, "description")?.text ?? "";
      const shown = new Set<string>();
      for (const [i, input] of children(child(element, "inputs"), "input").entries()) {
        const name = input.attributes.name;
        if (!name) refused(`${at}/inputs/input[${i + 1}]`, "an input needs a name");
        const bound = this.binding(input, `${at}/inputs/input[${i + 1}]`);
        if (bound === null) {
          // A placeholder: the operator's value (inner tasks: the current item).
          const variable = operatorVariables.includes(name) ? name : tag === "inner_task" ? "item" : null;
          if (!variable) refused(`${at}/inputs/input[${i + 1}]`, `a reduction_task's empty inputs are ${FOLD_VARIABLES.join(", ")}`);
          prompt += show(name, variable);
          shown.add(variable);
        } else {
          own[name] = bound;
          prompt += show(name);
        }
      }
      for (const variable of operatorVariables) if (!shown.has(variable) && variable !== "original_input") prompt += show(variable);
      return this.call(element, at, prompt);
    };
    const inner = part("inner_task", ["item"]);
    const reduction = part("reduction_task", FOLD_VARIABLES);
    const initial = child(task, "initial_value");
    return {
      type: "reduce",
      inputs_from: inputsFrom,
      ...(initial && initial.text !== "" ? { initial_value: value(initial.text, `${path}/initial_value`) } : {}),
      ...(inner ? { inner_task: inner } : {}),
      ...(reduction ? { reduction_task: reduction } : {}),
      ...(Object.keys(own).length > 0 ? { inputs: own } : {}),
    };
  }
}

/** The POST /v1/pipelines body the XML document stands for. */
export function pipelineFromXml(root: XmlElement, query: Record<string, string>): Json {
  if (root.tag !== "task") refused(root.tag, "the root element is <task>");
  const converter = new Converter();
  const body = pipelineFields(root, query);
  const type = root.attributes.type ?? (child(root, "steps") ? "sequential" : "atomic");
  if (type === "sequential") {
    const context = converter.context(root, "task");
    if (context) body.context_management = context;
    const named: Json = { ...((body.inputs as Json | undefined) ?? {}) };
    for (const [i, input] of children(child(root, "inputs"), "input").entries()) {
      if (!input.attributes.name || input.attributes.from) refused(`task/inputs/input[${i + 1}]`, 'the pipeline\'s inputs are <input name="…">value</input>');
      named[input.attributes.name] = value(input.text, `task/inputs/input[${i + 1}]`);
    }
    body.steps = children(child(root, "steps"), "task").map((t, i) => converter.step(t, `task/steps/task[${i + 1}]`));
    body.inputs = named;
  } else {
    const stripped: XmlElement = { ...root, attributes: Object.fromEntries(Object.entries(root.attributes).filter(([k]) => k === "type" || k === "id")) };
    body.steps = [converter.step(stripped, "task")];
  }
  body.inputs = { ...((body.inputs as Json | undefined) ?? {}), ...converter.reduceInputs };
  return body;
}
