// @ts-check
/**
 * A job, live: its event stream (resumed with Last-Event-ID) drives an overall bar with rate and
 * ETA, per-stage bars, the budget, the results as they complete, and the failures grouped by
 * `error_kind`; buttons cancel, recover, resume and download the results as JSONL. An ended job
 * shows its output (./output.js); a map-reduce job its audit tree; an agentic item links to its session.
 */
import { api, ENDED_STATUSES, followEvents } from "./api.js";
import { auditTree } from "./audit.js";
import { renderOutput } from "./output.js";
import { evaluateForm } from "./evaluate.js";
import { dollars, executionText, modelsText, pacingText, promptCached } from "./job-text.js";
import { bar, brief, cardTable, duration, errorText, fill, h, jobBadge, notice, num, showJson, when } from "./ui.js";

const SHOWN_RESULTS = 200; // the newest results listed; every result is in the download
const ENDED = ENDED_STATUSES;

/** @param {HTMLElement} view @param {string} jobId */
export async function showJob(view, jobId) {
  const state = {
    job: /** @type {any} */ (null),
    results: /** @type {Map<string, any>} */ (new Map()), // `${stage}:${index}` → the newest result
    samples: /** @type {{ t: number, done: number }[]} */ ([]),
    stream: "connecting",
    lastEventId: 0,
    message: /** @type {HTMLElement | null} */ (null),
    resumeBudget: /** @type {string | null} */ (null), // a new budget total as typed, kept across redraws
  };
  const parts = {
    head: h("section", { class: "card", "aria-label": "Job" }),
    progress: h("section", { class: "card", "aria-label": "Progress" }),
    output: h("section", { class: "card", "aria-label": "Output", hidden: true }),
    actions: h("section", { class: "actions", "aria-label": "Actions" }),
    failures: h("section", { class: "card", "aria-label": "Failures" }),
    results: h("section", { class: "card", "aria-label": "Results" }),
    audit: h("section", { class: "card", "aria-label": "Audit", hidden: true }),
  };
  fill(view, ...Object.values(parts));

  const render = () => {
    if (!state.job) return;
    renderHead(parts.head, state);
    renderProgress(parts.progress, state);
    renderOutput(parts.output, state.job);
    renderActions(parts.actions, state, act);
    renderFailures(parts.failures, state);
    renderResults(parts.results, state);
  };

  let refreshing = /** @type {Promise<void> | null} */ (null);
  let again = false;
  const refresh = async () => {
    if (refreshing) {
      again = true;
      return refreshing;
    }
    refreshing = (async () => {
      try {
        state.job = await api("GET", `/v1/jobs/${encodeURIComponent(jobId)}`);
        state.samples.push({ t: Date.now(), done: state.job.completed });
        if (state.samples.length > 30) state.samples.shift();
        render();
      } finally {
        await new Promise((r) => setTimeout(r, 400)); // at most ~2 reads a second
        refreshing = null;
        if (again) {
          again = false;
          void refresh();
        }
      }
    })();
    return refreshing;
  };

  /** @param {string} what @param {() => Promise<unknown>} run */
  const act = async (what, run) => {
    try {
      await run();
      state.message = notice(`${what}: done.`, "ok");
      void follow(); // a recovered or resumed job goes on with new events (a cancelled one ends its stream)
      await refresh();
    } catch (err) {
      state.message = notice(`${what} failed: ${errorText(err)}`);
      render();
    }
  };

  const controller = new AbortController();
  let following = false;
  const follow = async () => {
    if (following) return;
    following = true;
    try {
      state.lastEventId = await followEvents(
        jobId,
        (event) => onEvent(event, state, refresh, render),
        controller.signal,
        (s) => {
          state.stream = s;
          render();
        },
        state.lastEventId,
      );
    } catch (err) {
      state.message = notice(errorText(err));
    } finally {
      following = false;
    }
    await settle(state, refresh);
    if (state.job?.type === "map_reduce" && ENDED.has(state.job.status)) void showAudit(parts.audit, jobId);
  };

  try {
    await refresh();
  } catch (err) {
    fill(view, notice(errorText(err)), h("p", {}, h("a", { href: "/" }, "All jobs")));
    return;
  }
  void follow();
}

/** After the stream ends, D1 may trail the coordinator by a moment: read until the job shows it ended. */
async function settle(state, refresh) {
  for (let i = 0; i < 20 && state.job && !ENDED.has(state.job.status) && state.job.status !== "paused"; i++) {
    await new Promise((r) => setTimeout(r, 250));
    await refresh();
  }
}

/** @param {{ id: number, name: string, data: any }} event */
function onEvent(event, state, refresh, render) {
  const data = event.data ?? {};
  if (event.name === "MAP_ITEM_COMPLETED" || event.name === "TASK_COMPLETED") {
    const stage = data.stage ?? "items";
    state.results.set(`${stage}:${data.result?.index ?? data.index}`, { ...data.result, stage, at: event.id });
    // The counters (done, succeeded, failed, attempts) come only from the job as read (one row,
    // consistent): an event's own `completed` is ahead of that row and would not add up with it.
    render();
  }
  void refresh();
}

function renderHead(el, state) {
  const job = state.job;
  const streamText = { connecting: "connecting…", live: "live", reconnecting: "reconnecting…", ended: "stream ended" }[state.stream] ?? state.stream;
  const paced = pacingText(job);
  fill(
    el,
    job.name ? h("h2", { class: "job-name" }, job.name) : null,
    h("p", { class: "job-id" }, h("code", {}, job.id), " ", jobBadge(job), " ", h("span", { class: "muted" }, job.type.replace("_", "-"), " · ", job.model)),
    h(
      "dl",
      { class: "facts" },
      h("dt", {}, "Created"),
      h("dd", {}, when(job.created_at)),
      h("dt", {}, "Finished"),
      h("dd", {}, when(job.completed_at)),
      h("dt", {}, "Attempts"),
      h("dd", {}, num(job.total_attempts)),
      job.effective_concurrency !== null && job.effective_concurrency !== undefined ? h("dt", {}, "Calls at once") : null,
      job.effective_concurrency !== null && job.effective_concurrency !== undefined
        ? h("dd", { id: "effective-concurrency" }, num(job.effective_concurrency))
        : null,
      h("dt", {}, "Tokens"),
      h(
        "dd",
        {},
        `${num(job.usage.input_tokens)} in · ${num(job.usage.output_tokens)} out`,
        promptCached(job.usage),
        job.usage.cached?.calls ? ` · ${num(job.usage.cached.calls)} cached calls` : "",
      ),
      h("dt", {}, "Cost"),
      h("dd", { id: "cost" }, dollars(job.cost_usd)),
      h("dt", {}, "Execution"),
      h("dd", { id: "execution" }, executionText(job)),
      paced ? h("dt", {}, "Paced at") : null,
      paced ? h("dd", { id: "pacing" }, paced) : null,
      job.models?.length ? h("dt", {}, "Models") : null,
      job.models?.length ? h("dd", { id: "models" }, modelsText(job.models)) : null,
      job.evaluates ? h("dt", {}, "Evaluates") : null,
      job.evaluates ? h("dd", { id: "evaluates" }, jobLink(job.evaluates)) : null,
      job.evaluations?.length ? h("dt", {}, "Evaluations") : null,
      job.evaluations?.length
        ? h("dd", { id: "evaluations" }, ...job.evaluations.flatMap((/** @type {string} */ id, /** @type {number} */ i) => [i > 0 ? ", " : "", jobLink(id)]))
        : null,
      h("dt", {}, "Updates"),
      h("dd", { id: "stream-state" }, streamText),
    ),
    job.pause_reason ? notice(`Paused: ${job.pause_reason}`, "ok") : null,
    job.error ? notice(`${job.error.code}: ${job.error.message}`) : null,
    state.message,
  );
}

/** @param {string} id */
const jobLink = (id) => h("a", { href: `/jobs/${encodeURIComponent(id)}` }, id);

function rate(state) {
  const s = state.samples;
  if (s.length < 2) return null;
  const first = s[0];
  const last = s[s.length - 1];
  const dt = (last.t - first.t) / 1000;
  return dt > 0 ? (last.done - first.done) / dt : null;
}

function renderProgress(el, state) {
  const job = state.job;
  const r = rate(state);
  const ended = ENDED.has(job.status);
  const detail = [
    `${num(job.succeeded)} succeeded`,
    `${num(job.failed)} failed`,
    !ended && r && r > 0 ? `${r.toFixed(1)} items/s` : null,
    !ended && r && r > 0 ? `ETA ${duration((job.total - job.completed) / r)}` : null,
  ]
    .filter(Boolean)
    .join(" · ");
  const stages = job.stages.length > 1 ? job.stages : [];
  fill(
    el,
    h("h2", {}, "Progress"),
    h("div", { id: "overall" }, bar("Overall", job.completed, job.total, detail, job.failed)),
    stages.length > 0
      ? h(
          "div",
          { class: "stages" },
          h("h3", {}, "Stages"),
          ...stages.map((s) => bar(s.name, s.completed, s.total, `${s.status}${s.failed ? ` · ${s.failed} failed` : ""}`)),
        )
      : null,
    job.budget ? h("div", { class: "budget" }, bar("Token budget", job.budget.spent, job.budget.total, `${num(job.budget.reserved)} reserved`)) : null,
    job.expected
      ? h(
          "p",
          { id: "expected", class: "muted" },
          `Expected at the end, from the finished calls: ${dollars(job.expected.cost_usd)} · ${num(job.expected.input_tokens + job.expected.output_tokens)} tokens`,
        )
      : null,
  );
}

/**
 * The buttons are drawn again only when what they show changes: a refresh that replaced them
 * between a press and its release would lose the click (and the focus of the budget field).
 */
function renderActions(el, state, act) {
  const job = state.job;
  const id = encodeURIComponent(job.id);
  const running = job.status === "running" || job.status === "queued" || job.status === "paused";
  const canRecover = ENDED.has(job.status) && (job.failed > 0 || job.status !== "completed");
  const shown = JSON.stringify([job.id, job.status, job.pause_reason ?? null, job.budget?.total ?? null, canRecover, job.failed]);
  if (el.dataset.shown === shown) return;
  el.dataset.shown = shown;
  const button = (label, onclick, kind = "") => h("button", { type: "button", class: kind, onclick }, label);
  fill(
    el,
    running ? button("Cancel", () => act("Cancel", () => api("POST", `/v1/jobs/${id}/cancel`)), "danger") : null,
    canRecover
      ? button(`Recover (re-run ${job.failed > 0 ? `${num(job.failed)} failed` : "unfinished"})`, () =>
          act("Recover", () => api("POST", `/v1/jobs/${id}/recover`)),
        )
      : null,
    ...(job.status === "paused" ? resumeControls(state, act) : []),
    button("Download results (JSONL)", () => act("Download", () => download(job.id)), "secondary"),
    ENDED.has(job.status) && job.type !== "evaluation" ? evaluateForm(job) : null,
  );
}

/**
 * Resume, with a new budget total when the budget paused the job (twice the old one unless
 * changed). What the user typed is kept in the page's state: the section is drawn again on every
 * refresh, and a redraw between typing and clicking must not put the default back.
 */
function resumeControls(state, act) {
  const job = state.job;
  const id = encodeURIComponent(job.id);
  const withBudget = job.pause_reason === "budget_exhausted" && job.budget;
  const total = /** @type {HTMLInputElement} */ (
    h("input", {
      id: "resume-budget",
      type: "number",
      min: 1,
      value: state.resumeBudget ?? (withBudget ? job.budget.total * 2 : ""),
      oninput: (/** @type {Event} */ e) => (state.resumeBudget = /** @type {HTMLInputElement} */ (e.target).value),
    })
  );
  const resume = h(
    "button",
    {
      type: "button",
      onclick: () => act("Resume", () => api("POST", `/v1/jobs/${id}/resume`, withBudget ? { token_budget: { total: Number(total.value) } } : {})),
    },
    "Resume",
  );
  return withBudget ? [h("span", { class: "inline-field" }, h("label", { for: "resume-budget" }, "New token budget"), total), resume] : [resume];
}

async function download(jobId) {
  const lines = [];
  let cursor = null;
  do {
    const q = new URLSearchParams({ limit: "1000" });
    if (cursor) q.set("cursor", cursor);
    const page = await api("GET", `/v1/jobs/${encodeURIComponent(jobId)}/results?${q}`);
    for (const r of page.results) lines.push(JSON.stringify(r));
    cursor = page.next_cursor;
  } while (cursor);
  const url = URL.createObjectURL(new Blob([lines.join("\n") + (lines.length ? "\n" : "")], { type: "application/x-ndjson" }));
  const a = h("a", { href: url, download: `${jobId}.jsonl` });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

function renderFailures(el, state) {
  const failed = [...state.results.values()].filter((r) => r.success === false);
  const groups = new Map();
  for (const r of failed) {
    const kind = r.error_kind ?? "unknown";
    groups.set(kind, [...(groups.get(kind) ?? []), r]);
  }
  if (groups.size === 0) {
    fill(el, h("h2", {}, "Failures"), h("p", { id: "no-failures" }, "None."));
    return;
  }
  fill(
    el,
    h("h2", {}, "Failures"),
    cardTable(
      h(
        "table",
        { id: "failures" },
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            h("th", { scope: "col" }, "Kind"),
            h("th", { scope: "col" }, "Count"),
            h("th", { scope: "col" }, "Tasks"),
            h("th", { scope: "col" }, "First error"),
          ),
        ),
        h(
          "tbody",
          {},
          ...[...groups.entries()].map(([kind, rows]) =>
            h(
              "tr",
              { "data-kind": kind },
              h("td", {}, kind),
              h("td", {}, num(rows.length)),
              h(
                "td",
                {},
                rows
                  .slice(0, 20)
                  .map((r) => (r.stage === "items" ? `#${r.index}` : `${r.stage}#${r.index}`))
                  .join(", "),
              ),
              h("td", {}, brief(rows[0].error, 160)),
            ),
          ),
        ),
      ),
    ),
  );
}

/**
 * The newest results, drawn again only when they change: a refresh that replaced the table
 * between a press and its release on a row's Details button lost the click.
 */
function renderResults(el, state) {
  const rows = [...state.results.values()].sort((a, b) => b.at - a.at).slice(0, SHOWN_RESULTS);
  const shown = JSON.stringify(rows.map((r) => [r.stage, r.index, r.at, r.success, r.attempts ?? r.turns ?? 0]));
  if (el.dataset.shown === shown) return;
  el.dataset.shown = shown;
  fill(
    el,
    h("h2", {}, "Results"),
    rows.length === 0
      ? h("p", {}, "No result yet.")
      : h(
          "div",
          { class: "scroll" },
          cardTable(
            h(
              "table",
              { id: "results" },
              h("caption", { class: "visually-hidden" }, `The ${SHOWN_RESULTS} newest results; download for all`),
              h("thead", {}, h("tr", {}, ...["Task", "", "Input", "Output", "Error", "Attempts", ""].map((t) => h("th", { scope: "col" }, t)))),
              h("tbody", {}, ...rows.map(resultRow)),
            ),
          ),
        ),
  );
}

function resultRow(r) {
  const label = r.stage === "items" ? `#${r.index}` : `${r.stage} #${r.index}`;
  const output = r.output !== undefined ? r.output : r.output_text;
  return h(
    "tr",
    { class: r.success ? "" : "bad" },
    h("td", {}, label),
    h("td", {}, r.success ? h("span", { "aria-label": "succeeded" }, "✓") : h("span", { "aria-label": "failed" }, "✗")),
    h("td", {}, brief(r.input ?? r.name ?? "", 60)),
    h("td", {}, r.success ? brief(output, 80) : ""),
    h("td", {}, r.error_kind ?? ""),
    h("td", {}, num(r.attempts ?? r.turns ?? 0)),
    h(
      "td",
      { class: "row-actions" },
      h("button", { type: "button", class: "link", onclick: () => showJson(`Result ${label}`, r) }, "Details"),
      r.session_id ? h("a", { href: `/sessions/${encodeURIComponent(r.session_id)}` }, "Session") : null,
    ),
  );
}

async function showAudit(el, jobId) {
  try {
    const audit = await api("GET", `/v1/jobs/${encodeURIComponent(jobId)}/audit`);
    el.hidden = false;
    fill(el, h("h2", {}, "Audit"), auditTree(audit));
  } catch (err) {
    el.hidden = false;
    fill(el, h("h2", {}, "Audit"), notice(errorText(err)));
  }
}
