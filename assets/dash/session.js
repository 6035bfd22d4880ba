// @ts-check
/** An agent sub-session: its summary, its place in the subtask tree, and the conversation with its tool calls. */
import { api } from "./api.js";
import { badge, errorText, fill, h, notice, num } from "./ui.js";

/** @param {HTMLElement} view @param {string} sessionId */
export async function showSession(view, sessionId) {
  fill(view, h("p", {}, "Loading…"));
  try {
    const s = await api("GET", `/v1/sessions/${encodeURIComponent(sessionId)}`);
    fill(
      view,
      summary(s),
      h(
        "section",
        { class: "card", "aria-label": "Conversation" },
        h("h2", {}, "Conversation"),
        h("ol", { class: "messages", id: "messages" }, ...s.messages.map(message)),
      ),
    );
  } catch (err) {
    fill(view, notice(errorText(err)));
  }
}

function summary(s) {
  const link = (/** @type {string} */ id) => h("a", { href: `/sessions/${encodeURIComponent(id)}` }, id);
  return h(
    "section",
    { class: "card", "aria-label": "Session" },
    h(
      "p",
      {},
      h("code", {}, s.session_id),
      " ",
      badge(s.status),
      " ",
      h("a", { href: `/jobs/${encodeURIComponent(s.job_id)}` }, `job ${s.job_id}`),
      ` · item #${s.index}`,
    ),
    h(
      "dl",
      { class: "facts" },
      h("dt", {}, "Turns"),
      h("dd", {}, num(s.turns)),
      h("dt", {}, "Stop reason"),
      h("dd", {}, s.stop_reason ?? "—"),
      h("dt", {}, "Tokens"),
      h("dd", {}, num(s.token_usage.total_tokens)),
      h("dt", {}, "Depth"),
      h("dd", {}, String(s.depth)),
      h("dt", {}, "Parent"),
      h("dd", {}, s.parent_session_id ? link(s.parent_session_id) : "—"),
      h("dt", {}, "Subtasks"),
      h(
        "dd",
        { id: "children" },
        ...(s.children.length ? s.children.flatMap((/** @type {string} */ c, /** @type {number} */ i) => (i ? [", ", link(c)] : [link(c)])) : ["—"]),
      ),
    ),
  );
}

function message(m) {
  const calls = (m.tool_calls ?? []).map((/** @type {any} */ c) =>
    h("div", { class: "tool-call" }, h("strong", {}, `→ ${c.name}`), h("pre", {}, pretty(c.arguments))),
  );
  const role = /** @type {Record<string, string>} */ ({ user: "User", assistant: "Assistant", system: "System", tool: "Tool result" })[m.role] ?? m.role;
  const title = m.role === "tool" && m.name ? `${role}: ${m.name}${m.is_error ? " (error)" : ""}` : role; // a tool's name as it is spelled
  return h("li", { class: `message message-${m.role}${m.is_error ? " bad" : ""}` }, h("h3", {}, title), m.content ? h("pre", {}, m.content) : null, ...calls);
}

/** @param {string} text */
function pretty(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
