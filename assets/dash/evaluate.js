// @ts-check
/**
 * "Evaluate this job" on an ended job's page: a judge model, its criteria (one a line, `name:
 * what passing means`) and a sample size, sent as POST /v1/evaluations; the evaluation's own page
 * follows it. The API's checks answer for every field.
 */
import { api } from "./api.js";
import { errorText, h, notice } from "./ui.js";

/** The form, for a job that has ended and is not an evaluation itself. @param {any} job */
export function evaluateForm(job) {
  const model = /** @type {HTMLInputElement} */ (h("input", { id: "judge-model", value: "openai/gpt-6-sol", autocomplete: "off" }));
  const criteria = /** @type {HTMLTextAreaElement} */ (h("textarea", { id: "judge-criteria", rows: 3 }, "correct: The answer is right for its input"));
  const size = /** @type {HTMLInputElement} */ (h("input", { id: "judge-sample", type: "number", min: 1, value: 100 }));
  const status = h("p", { id: "evaluate-status", role: "status" });
  const start = async () => {
    const parsed = criteria.value
      .split("\n")
      .map((line) => line.trim())
      .filter(Boolean)
      .map((line) => {
        const at = line.indexOf(":");
        return at > 0 ? { name: line.slice(0, at).trim(), description: line.slice(at + 1).trim() } : { name: line, description: line };
      });
    try {
      const created = await api("POST", "/v1/evaluations", {
        job_id: job.id,
        judge: { model: model.value.trim(), criteria: parsed },
        sample: { size: Number(size.value) },
      });
      location.assign(`/jobs/${encodeURIComponent(created.job_id)}`);
    } catch (err) {
      status.replaceChildren(notice(errorText(err)));
    }
  };
  return h(
    "details",
    { id: "evaluate" },
    h("summary", {}, "Evaluate this job"),
    h("label", { for: "judge-model" }, "Judge model"),
    model,
    h("label", { for: "judge-criteria" }, "Criteria (one a line: name: what passing means)"),
    criteria,
    h("label", { for: "judge-sample" }, "Sample size"),
    size,
    h("button", { type: "button", onclick: () => void start() }, "Start evaluation"),
    status,
  );
}
