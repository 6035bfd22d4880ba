// @ts-check
/** The jobs page: the tenant's jobs newest first, filtered by status, a page at a time. */
import { api } from "./api.js";
import { bar, cardTable, errorText, fill, h, jobBadge, notice, num, when } from "./ui.js";

const STATUSES = ["", "queued", "running", "paused", "completed", "failed", "cancelled"];
const PAGE_SIZE = 20;

/** @param {HTMLElement} view */
export async function showJobs(view) {
  const params = new URLSearchParams(location.search);
  const status = params.get("status") ?? "";
  const cursor = params.get("cursor");
  const limit = Math.min(100, Math.max(1, Number(params.get("limit")) || PAGE_SIZE));
  const select = /** @type {HTMLSelectElement} */ (
    h("select", { id: "status-filter", name: "status" }, ...STATUSES.map((s) => h("option", { value: s, selected: s === status }, s || "any")))
  );
  select.addEventListener("change", () => {
    const next = new URLSearchParams();
    if (select.value) next.set("status", select.value);
    location.assign(`/?${next}`);
  });
  const filter = h("form", { class: "filters", role: "search" }, h("label", { for: "status-filter" }, "Status"), select);
  const body = h("div", {}, h("p", {}, "Loading…"));
  fill(view, filter, body);

  const query = new URLSearchParams({ limit: String(limit) });
  if (status) query.set("status", status);
  if (cursor) query.set("cursor", cursor);
  try {
    const page = await api("GET", `/v1/jobs?${query}`);
    fill(
      body,
      page.jobs.length === 0 ? h("p", {}, "No jobs yet. ", h("a", { href: "/new" }, "Start one.")) : table(page.jobs),
      pager(status, limit, cursor, page.next_cursor),
    );
  } catch (err) {
    fill(body, notice(errorText(err)));
  }
}

/** @param {any[]} jobs */
function table(jobs) {
  const head = ["Job", "Type", "Status", "Progress", "Failed", "Tokens", "Created", "Finished"];
  return h(
    "div",
    { class: "scroll" },
    cardTable(
      h(
        "table",
        { class: "jobs" },
        h("caption", { class: "visually-hidden" }, "Jobs, newest first"),
        h("thead", {}, h("tr", {}, ...head.map((t) => h("th", { scope: "col" }, t)))),
        h(
          "tbody",
          {},
          ...jobs.map((job) =>
            h(
              "tr",
              {},
              h(
                "td",
                {},
                h("a", { href: `/jobs/${encodeURIComponent(job.id)}` }, job.name ?? job.id),
                job.name ? h("div", { class: "muted small" }, job.id) : null,
              ),
              h("td", {}, job.type),
              h("td", {}, jobBadge(job)),
              h("td", { class: "progress-cell" }, bar("Done", job.completed, job.total, undefined, job.failed)),
              h("td", { class: job.failed > 0 ? "bad" : "" }, num(job.failed)),
              h("td", {}, num(job.usage.input_tokens + job.usage.output_tokens)),
              h("td", {}, when(job.created_at)),
              h("td", {}, when(job.completed_at)),
            ),
          ),
        ),
      ),
    ),
  );
}

/** @param {string} status @param {number} limit @param {string | null} cursor @param {string | null} next */
function pager(status, limit, cursor, next) {
  const link = (/** @type {string | null} */ c) => {
    const q = new URLSearchParams();
    if (status) q.set("status", status);
    if (limit !== PAGE_SIZE) q.set("limit", String(limit));
    if (c) q.set("cursor", c);
    return `/?${q}`;
  };
  return h(
    "nav",
    { class: "pager", "aria-label": "Pages" },
    cursor ? h("a", { href: link(null) }, "← Newest") : null,
    next ? h("a", { href: link(next), rel: "next" }, "Older →") : null,
  );
}
