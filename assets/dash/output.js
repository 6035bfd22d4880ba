// @ts-check
/**
 * An ended job's `output`, drawn for its operator: a filter's kept and dropped items, a
 * classification's counts per label, a ranking's top k, a resolution's clusters; any other
 * staged job's value as JSON. Who decided (a cascade's `decided_by`) when the job had one.
 */
import { brief, fill, h, num, showJson } from "./ui.js";
import { api } from "./api.js";

const LISTED = 50; // indices and clusters shown; every one is in the job's JSON

/** @param {number[]} list */
const indices = (list) =>
  list.length === 0 ? "none" : `#${list.slice(0, LISTED).join(", #")}${list.length > LISTED ? ` … (${num(list.length - LISTED)} more)` : ""}`;

/** @param {any} out */
function decidedBy(out) {
  const by = out?.decided_by;
  if (!by) return null;
  const sampled = by.sample !== undefined ? ` · its sample: ${num(by.sample)}` : "";
  const line = h("p", { class: "muted", id: "decided-by" }, `Decided by the cascade: ${num(by.cascade)} · by the job's model: ${num(by.model)}${sampled}`);
  const c = out.cascade;
  if (!c) return line;
  const e = c.estimate;
  const learned = c.met
    ? `Learned thresholds: accept at ${c.accept_above ?? "never"}, reject at ${c.reject_below ?? "never"}`
    : "No threshold met the target: the job's model answered every item";
  const estimate = `${e.metric} against the job's model: ${pct(e.value)} on a sample of ${num(c.sample_size)}, at least ${pct(e.lower_bound)} with ${pct(e.confidence)} confidence`;
  return h(
    "div",
    { id: "cascade-target" },
    line,
    h("p", {}, learned),
    h("p", {}, estimate),
    h("p", { class: "muted" }, `Calls of the job's model: ${num(c.oracle_calls)} · seed ${c.seed}`),
  );
}

/** @param {any} job @returns {(HTMLElement | null)[]} */
function view(job) {
  const out = job.output;
  switch (job.type) {
    case "filter":
      return [
        h("p", { id: "filter-summary" }, `Kept ${num(out.kept.length)} · dropped ${num(out.dropped)} · failed ${num(out.failed)}`),
        h("p", {}, "Kept: ", indices(out.kept)),
        decidedBy(out),
      ];
    case "classify": {
      const rows = Object.entries(out.counts).sort((a, b) => Number(b[1]) - Number(a[1]));
      return [
        h(
          "table",
          { id: "label-counts" },
          h("thead", {}, h("tr", {}, h("th", {}, "Label"), h("th", {}, "Items"))),
          h("tbody", {}, ...rows.map(([label, n]) => h("tr", {}, h("td", {}, label), h("td", {}, num(n))))),
        ),
        out.failed ? h("p", {}, `Failed: ${num(out.failed)}`) : null,
        decidedBy(out),
      ];
    }
    case "rank":
      return [
        h(
          "ol",
          { id: "top-k" },
          ...out.map((/** @type {any} */ e) => h("li", {}, `#${e.index} · score ${e.score}`, e.wins !== undefined ? ` · ${num(e.wins)} comparisons won` : "")),
        ),
      ];
    case "resolve": {
      const groups = out.clusters.filter((/** @type {number[]} */ c) => c.length > 1);
      return [
        h(
          "p",
          { id: "cluster-summary" },
          `${num(out.clusters.length)} entities from ${num(out.clusters.flat().length)} records · ${num(groups.length)} with more than one record`,
          out.failed ? ` · ${num(out.failed)} comparisons failed` : "",
          out.embeddings_failed ? ` · ${num(out.embeddings_failed)} embeddings failed` : "",
        ),
        h("ul", { id: "clusters" }, ...groups.slice(0, LISTED).map((/** @type {number[]} */ c) => h("li", {}, indices(c)))),
      ];
    }
    case "join":
      return [
        h(
          "p",
          { id: "join-summary" },
          `Pairs joined: ${num(out.pairs.length)} of ${num(out.comparisons)} judged · strategy ${out.strategy}`,
          out.failed ? ` · ${num(out.failed)} calls failed` : "",
          out.embeddings_failed ? ` · ${num(out.embeddings_failed)} embeddings failed` : "",
        ),
        h("ul", { id: "pairs" }, ...out.pairs.slice(0, LISTED).map((/** @type {[number, number]} */ [l, r]) => h("li", {}, `left #${l} · right #${r}`))),
      ];
    case "evaluation":
      return evaluationView(job);
    default:
      return [h("p", {}, brief(out, 400))];
  }
}

const pct = (/** @type {number | null} */ x) => (x === null || x === undefined ? "—" : `${(x * 100).toFixed(1)} %`);
const interval = (/** @type {[number, number] | null} */ i) => (i ? `${pct(i[0])} – ${pct(i[1])}` : "—");

/** An evaluation: each rate with its interval, and the items the judge failed (read from its results). @param {any} job */
function evaluationView(job) {
  const out = job.output;
  const level = `${(out.confidence * 100).toFixed(0)} % interval`;
  const parts = [];
  if (out.criteria) {
    const rows = Object.entries(out.criteria).map(([name, c]) =>
      h("tr", {}, h("td", {}, name), h("td", {}, pct(c.pass_rate)), h("td", {}, interval(c.interval)), h("td", {}, `${num(c.passed)} of ${num(c.judged)}`)),
    );
    parts.push(
      h(
        "table",
        { id: "criteria" },
        h("thead", {}, h("tr", {}, h("th", {}, "Criterion"), h("th", {}, "Pass rate"), h("th", {}, level), h("th", {}, "Passed"))),
        h("tbody", {}, ...rows),
      ),
    );
    if (out.judge_failed) parts.push(h("p", { class: "muted" }, `The judge gave no verdict on ${num(out.judge_failed)} items`));
  }
  if (out.gold) {
    const g = out.gold;
    const extra = g.precision !== undefined ? ` · precision ${pct(g.precision)} · recall ${pct(g.recall)} · F1 ${pct(g.f1)}` : "";
    parts.push(h("p", { id: "gold" }, `Gold: ${pct(g.accuracy)} right (${num(g.matched)} of ${num(g.n)}; ${level} ${interval(g.interval)})${extra}`));
  }
  if (out.compare) {
    const c = out.compare;
    parts.push(
      h(
        "p",
        { id: "compare" },
        `A won ${num(c.wins_a)} · B won ${num(c.wins_b)} · ties ${num(c.ties)} · A's win rate ${pct(c.win_rate_a.value)} (${level} ${interval(c.win_rate_a.interval)})`,
      ),
    );
  }
  if (out.criteria) {
    const failing = h("ul", { id: "failing" }, h("li", { class: "muted" }, "loading…"));
    parts.push(h("h3", {}, "Failed by the judge"), failing);
    api("GET", `/v1/jobs/${encodeURIComponent(job.id)}/results?failed=true&limit=${LISTED}`)
      .then((/** @type {any} */ page) => {
        const items = page.results.map((/** @type {any} */ r) => {
          const why = Object.entries(r.verdicts ?? {})
            .filter(([, v]) => !v.pass)
            .map(([name, v]) => `${name}: ${v.reason}`)
            .join("; ");
          return h("li", {}, `#${r.index} · ${why}`);
        });
        fill(failing, ...(items.length ? items : [h("li", {}, "none")]));
      })
      .catch(() => fill(failing, h("li", {}, "could not be read")));
  }
  return parts;
}

/** Drawn once per job and status: an ended job's output does not change. @param {HTMLElement} el @param {any} job */
export function renderOutput(el, job) {
  const shown = job.output !== null && job.output !== undefined && job.status === "completed";
  el.hidden = !shown;
  if (!shown) delete el.dataset.shown; // a recovered job ends again, with a new output
  if (!shown || el.dataset.shown === job.id) return;
  el.dataset.shown = job.id;
  const json = h("button", { type: "button", class: "secondary", onclick: () => showJson("The job's output", job.output) }, "Output as JSON");
  fill(el, h("h2", {}, "Output"), ...view(job), json);
}
