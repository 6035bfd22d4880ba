// @ts-check
/**
 * A new job of any operator (./operators.js): map with its own fields (template, optional schema),
 * the others with their request's fields as JSON; for all of them a name, the model, inputs pasted
 * as JSONL or uploaded as CSV or JSONL, the execution mode; a dry-run estimate (tokens and
 * dollars, realtime and batch) before submitting. The API's checks answer for the fields.
 */
import { api } from "./api.js";
import { OPERATORS, operatorBody } from "./operators.js";
import { errorText, fill, h, notice, num } from "./ui.js";

/** @param {HTMLElement} view */
export async function showNewJob(view) {
  const field = (/** @type {string} */ id, /** @type {string} */ label, /** @type {HTMLElement} */ input, /** @type {string} */ hint = "") =>
    h("div", { class: "field" }, h("label", { for: id }, label), hint ? h("p", { class: "hint", id: `${id}-hint` }, hint) : null, input);
  const model = /** @type {HTMLInputElement} */ (h("input", { id: "model", name: "model", required: true, value: "openai/gpt-6-luna", autocomplete: "off" }));
  const jobName = /** @type {HTMLInputElement} */ (
    h("input", { id: "job-name", name: "job-name", maxlength: 200, autocomplete: "off", placeholder: "Q3 support tickets" })
  );
  const operator = /** @type {HTMLSelectElement} */ (
    h("select", { id: "operator", name: "operator" }, ...Object.entries(OPERATORS).map(([name, op]) => h("option", { value: name }, op.label)))
  );
  const fields = /** @type {HTMLTextAreaElement} */ (
    h("textarea", { id: "operator-fields", name: "operator-fields", rows: 10, "aria-describedby": "operator-fields-hint" })
  );
  const template = /** @type {HTMLTextAreaElement} */ (
    h("textarea", { id: "template", name: "template", required: true, rows: 4, "aria-describedby": "template-hint" }, "Summarise in one sentence: {{ item }}")
  );
  const schema = /** @type {HTMLTextAreaElement} */ (h("textarea", { id: "schema", name: "schema", rows: 4, "aria-describedby": "schema-hint" }));
  const inputs = /** @type {HTMLTextAreaElement} */ (h("textarea", { id: "inputs", name: "inputs", rows: 6, "aria-describedby": "inputs-hint" }));
  const file = /** @type {HTMLInputElement} */ (
    h("input", { id: "inputs-file", name: "inputs-file", type: "file", accept: ".csv,.jsonl,.json,text/csv,application/json" })
  );
  const concurrency = /** @type {HTMLInputElement} */ (h("input", { id: "concurrency", name: "concurrency", type: "number", min: 1, max: 1000, value: 16 }));
  const retries = /** @type {HTMLInputElement} */ (h("input", { id: "max-retries", name: "max-retries", type: "number", min: 0, max: 10, value: 3 }));
  const mode = /** @type {HTMLSelectElement} */ (
    h(
      "select",
      { id: "execution-mode", name: "execution-mode", "aria-describedby": "execution-mode-hint" },
      h("option", { value: "realtime" }, "realtime"),
      h("option", { value: "batch" }, "batch"),
      h("option", { value: "auto" }, "auto"),
    )
  );
  const status = h("div", { id: "form-status", "aria-live": "polite" });
  const estimateButton = h("button", { type: "button", class: "secondary", id: "estimate" }, "Estimate");
  const form = /** @type {HTMLFormElement} */ (
    h(
      "form",
      { class: "card", id: "new-job" },
      field("operator", "Operator", operator),
      field("job-name", "Name (optional)", jobName),
      field("model", "Model", model),
      h(
        "div",
        { id: "map-fields" },
        field("template", "Prompt template", template, "Jinja2; each input is `item`."),
        field("schema", "Output schema (optional)", schema, "A JSON Schema the output must match."),
      ),
      h(
        "div",
        { id: "other-fields", hidden: true },
        field(
          "operator-fields",
          "The operator's fields (JSON)",
          fields,
          "Its request's own fields (docs/operators.md); the inputs, model, name, concurrency, retries and execution come from this form.",
        ),
      ),
      field("inputs", "Inputs", inputs, "One JSON value per line (JSONL), or upload a CSV (a header row) or JSONL file below."),
      field("inputs-file", "Upload inputs", file),
      h("div", { class: "row" }, field("concurrency", "Concurrency", concurrency), field("max-retries", "Retries", retries)),
      field(
        "execution-mode",
        "Execution",
        mode,
        "batch: the provider's batch API, half the price, results within its 24 h window; auto: batch first, the stragglers realtime within a day.",
      ),
      h("div", { class: "actions" }, estimateButton, h("button", { type: "submit" }, "Start job")),
      status,
    )
  );
  file.addEventListener("change", () => void loadFile(file, inputs, status));

  const chosen = () => OPERATORS[operator.value] ?? OPERATORS.map;
  operator.addEventListener("change", () => {
    const op = chosen();
    /** @type {HTMLElement} */ (form.querySelector("#map-fields")).hidden = op.fields !== null;
    /** @type {HTMLElement} */ (form.querySelector("#other-fields")).hidden = op.fields === null;
    if (op.fields) fields.value = JSON.stringify(op.fields, null, 2);
    fill(status);
  });
  const body = () => {
    const common = {
      name: jobName.value.trim() || undefined,
      model: model.value.trim(),
      inputs: parseInputs(inputs.value),
      concurrency: Number(concurrency.value),
      max_retries: Number(retries.value),
      execution: mode.value === "realtime" ? undefined : { mode: mode.value },
    };
    if (chosen().fields) return operatorBody(operator.value, parseJson(fields.value, "The operator's fields"), common);
    const outputSchema = schema.value.trim() ? parseJson(schema.value, "The output schema") : undefined;
    return { ...common, prompt_template: template.value, output_schema: outputSchema };
  };
  estimateButton.addEventListener("click", async () => {
    try {
      const { estimate } = await api("POST", `${chosen().route}?dry_run=true`, body());
      const cost = estimate.cost_usd_by_mode?.realtime;
      const most = estimate.cost_usd_max_by_mode?.realtime;
      const dollars =
        cost === null || cost === undefined
          ? ""
          : ` About $${cost.toFixed(6)} realtime (at most $${(most ?? cost).toFixed(6)}), $${(estimate.cost_usd_by_mode.batch ?? 0).toFixed(6)} through the provider's batch API.`;
      // The expected output beside its bound (max_tokens): what a budget reserves is the bound, what the job is likely to cost the expected figure.
      fill(
        status,
        h(
          "p",
          { id: "estimate-result", role: "status" },
          `Estimate: ${num(estimate.calls)} calls, ${num(estimate.input_tokens)} input + about ${num(estimate.output_tokens)} output tokens (at most ${num(estimate.output_tokens_max ?? estimate.output_tokens)}).${dollars}`,
        ),
      );
    } catch (err) {
      fill(status, notice(errorText(err)));
    }
  });
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      const created = await api("POST", chosen().route, body());
      location.assign(`/jobs/${encodeURIComponent(created.job_id)}`);
    } catch (err) {
      fill(status, notice(errorText(err)));
    }
  });
  fill(view, form);
}

/** @param {string} text @param {string} what */
function parseJson(text, what) {
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`${what} is not valid JSON.`);
  }
}

/** JSONL: one JSON value per non-blank line. @param {string} text */
function parseInputs(text) {
  return text
    .split(/\r?\n/)
    .map((line, i) => [line.trim(), i + 1])
    .filter(([line]) => line !== "")
    .map(([line, n]) => parseJson(String(line), `Inputs line ${n}`));
}

/** Reads an uploaded CSV (rows as objects) or JSONL/JSON file into the inputs box, as JSONL. */
async function loadFile(file, inputs, status) {
  const chosen = file.files?.[0];
  if (!chosen) return;
  const text = await chosen.text();
  try {
    const values = chosen.name.endsWith(".csv") ? csvRows(text) : chosen.name.endsWith(".json") ? asList(parseJson(text, chosen.name)) : parseInputs(text);
    inputs.value = values.map((v) => JSON.stringify(v)).join("\n");
    fill(status, notice(`Read ${num(values.length)} inputs from ${chosen.name}.`, "ok"));
  } catch (err) {
    fill(status, notice(errorText(err)));
  }
}

/** @param {unknown} value */
function asList(value) {
  if (!Array.isArray(value)) throw new Error("A .json file must hold a list of inputs.");
  return value;
}

/** RFC 4180 CSV: quoted fields with doubled quotes and line breaks; the first row names the columns. @param {string} text */
export function csvRows(text) {
  const rows = [];
  let row = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ",") {
      row.push(cell);
      cell = "";
    } else if (ch === "\n" || ch === "\r") {
      if (ch === "\r" && text[i + 1] === "\n") i++;
      row.push(cell);
      rows.push(row);
      row = [];
      cell = "";
    } else cell += ch;
  }
  if (cell !== "" || row.length > 0) {
    row.push(cell);
    rows.push(row);
  }
  const [header, ...data] = rows.filter((r) => r.length > 1 || r[0] !== "");
  if (!header) return [];
  return data.map((r) => Object.fromEntries(header.map((name, i) => [name, r[i] ?? ""])));
}
