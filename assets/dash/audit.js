// @ts-check
/**
 * A map-reduce job's audit as a tree: each final call at the top, the calls that fed it beneath
 * it (disclosure widgets, keyboard-operable), down to the mappers and the documents they read.
 */
import { h, num } from "./ui.js";

/** @param {{ documents: number, left_out: number[], nodes: any[] }} audit */
export function auditTree(audit) {
  const byId = new Map(audit.nodes.map((n) => [n.id, n]));
  const fed = new Set(audit.nodes.flatMap((n) => n.inputs));
  const roots = audit.nodes.filter((n) => !fed.has(n.id));
  return h(
    "div",
    { id: "audit-tree" },
    h("p", {}, `${num(audit.documents)} documents`, audit.left_out.length ? ` · left out: ${audit.left_out.join(", ")}` : ""),
    h("ul", { class: "tree", role: "tree" }, ...roots.map((n) => node(n, byId, 0))),
  );
}

/** @param {any} n @param {Map<string, any>} byId @param {number} depth */
function node(n, byId, depth) {
  const label = [
    n.id,
    n.level !== null && n.level !== undefined ? `level ${n.level}` : null,
    n.key !== null && n.key !== undefined ? `key ${n.key}` : null,
    `${num(n.sources.length)} document${n.sources.length === 1 ? "" : "s"}`,
    `${num(n.usage.input_tokens + n.usage.output_tokens)} tokens`,
  ]
    .filter(Boolean)
    .join(" · ");
  const children = n.inputs.map((/** @type {string} */ id) => byId.get(id)).filter(Boolean);
  if (children.length === 0) {
    return h("li", { role: "treeitem" }, h("span", { class: "node" }, label), h("span", { class: "muted" }, ` — documents ${n.sources.join(", ")}`));
  }
  return h(
    "li",
    { role: "treeitem" },
    h("details", { open: depth < 2 }, h("summary", { class: "node" }, label), h("ul", { role: "group" }, ...children.map((c) => node(c, byId, depth + 1)))),
  );
}
