// @ts-check
/** DOM helpers for the dashboard: elements built without HTML strings, formats, progress bars, a JSON dialog. */

/**
 * An element with attributes (`on…` functions become listeners) and children (strings are text).
 * @param {string} tag
 * @param {Record<string, unknown>} [attrs]
 * @param {...(Node | string | number | null | undefined | false)} children
 * @returns {HTMLElement}
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") el.addEventListener(name.slice(2), /** @type {EventListener} */ (value));
    else if (name === "class") el.className = String(value);
    else el.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    el.append(typeof child === "object" ? child : String(child));
  }
  return el;
}

/** @param {Element} el @param {...(Node | string | null | undefined | false)} children */
export function fill(el, ...children) {
  el.replaceChildren(...children.filter((c) => c !== null && c !== undefined && c !== false).map((c) => (typeof c === "object" ? c : String(c))));
}

/** @param {number} n */
export const num = (n) => Number(n ?? 0).toLocaleString("en-US");

/** @param {string | null | undefined} iso */
export function when(iso) {
  if (!iso) return "—";
  const d = new Date(iso);
  return d.toISOString().replace("T", " ").slice(0, 19) + " UTC";
}

/** @param {number} seconds */
export function duration(seconds) {
  if (!Number.isFinite(seconds) || seconds < 0) return "—";
  if (seconds < 60) return `${Math.round(seconds)} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
  return `${Math.floor(seconds / 3600)} h ${Math.round((seconds % 3600) / 60)} min`;
}

/** A value as one short line. @param {unknown} value @param {number} [max] */
export function brief(value, max = 80) {
  const text = typeof value === "string" ? value : (JSON.stringify(value) ?? "");
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * A labelled progress bar: a native <progress> (announced by screen readers) and its figures.
 * @param {string} label
 * @param {number} done
 * @param {number} total
 * @param {string} [detail]
 * @param {number} [failed] of `done`, how many failed: a bar of failures is red, a mixed one amber
 */
export function bar(label, done, total, detail, failed = 0) {
  const pct = total > 0 ? Math.floor((done / total) * 100) : 0;
  const tone = failed > 0 && failed >= done ? "bar-failed" : failed > 0 ? "bar-mixed" : "";
  const id = `bar-${Math.random().toString(36).slice(2, 8)}`;
  return h(
    "div",
    { class: "bar" },
    h(
      "label",
      { for: id },
      h("span", { class: "bar-label" }, label),
      " ",
      h("span", { class: "bar-figures" }, `${num(done)} / ${num(total)} (${pct} %)`),
      detail ? ` · ${detail}` : "",
    ),
    h("progress", { id, class: tone, max: Math.max(total, 1), value: Math.min(done, Math.max(total, 1)), "data-percent": pct }),
    // The failed part beside it, in red (a meter past its `high`), so the split shows, not one amber bar.
    failed > 0
      ? h("meter", {
          class: "bar-failures",
          min: 0,
          max: Math.max(total, 1),
          low: 0,
          high: 0,
          optimum: 0,
          value: Math.min(failed, Math.max(total, 1)),
          title: `${num(failed)} failed`,
          "aria-label": `${num(failed)} of ${num(total)} failed`,
        })
      : null,
  );
}

/** @param {string} status */
export const badge = (status) => h("span", { class: `badge badge-${status}` }, status);

/**
 * A job's status as a badge that does not call a job of failures green: `completed` with failed
 * items says how many (amber), and with nothing but failures says so (red).
 * @param {{ status: string, failed?: number, succeeded?: number }} job
 */
export function jobBadge(job) {
  if (job.status !== "completed" || !job.failed) return badge(job.status);
  const all = !job.succeeded;
  return h("span", { class: `badge ${all ? "badge-failed" : "badge-paused"}` }, all ? "completed · all failed" : `completed · ${num(job.failed)} failed`);
}

/** Shows `value` as pretty JSON in a modal dialog (Escape or the button closes it; focus returns). @param {string} title @param {unknown} value */
export function showJson(title, value) {
  const opener = document.activeElement;
  const close = h("button", { type: "button", class: "secondary" }, "Close");
  const dialog = /** @type {HTMLDialogElement} */ (
    h("dialog", { "aria-label": title }, h("h2", {}, title), h("pre", { class: "json" }, JSON.stringify(value, null, 2)), close)
  );
  close.addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", () => {
    dialog.remove();
    if (opener instanceof HTMLElement) opener.focus();
  });
  document.body.append(dialog);
  dialog.showModal();
  close.focus();
}

/** A status line for errors and notices (announced politely). @param {string} text @param {"error" | "ok"} [kind] */
export const notice = (text, kind = "error") => h("p", { class: `notice notice-${kind}`, role: kind === "error" ? "alert" : "status" }, text);

/** The API error as the user should read it: its message and the fields it names. @param {unknown} err */
export function errorText(err) {
  const e = /** @type {{ message?: string, details?: unknown }} */ (err);
  const details = Array.isArray(e.details)
    ? e.details.map((d) => (d && typeof d === "object" && "path" in d ? `${d.path}: ${d.message}` : "")).filter(Boolean)
    : [];
  return [e.message ?? String(err), ...details].join(" — ");
}

/**
 * A table that becomes cards on a phone: each body cell gets its column's heading as `data-label`,
 * and below 40rem the stylesheet lays each row out as a card, each cell under its heading, so no
 * column is off-screen in a side-scrolled table. @param {HTMLElement} table
 */
export function cardTable(table) {
  const heads = [...table.querySelectorAll("thead th")].map((th) => th.textContent ?? "");
  table.classList.add("cards");
  for (const row of table.querySelectorAll("tbody tr")) {
    [...row.children].forEach((cell, i) => {
      if (heads[i]) cell.setAttribute("data-label", heads[i]);
    });
  }
  return table;
}
