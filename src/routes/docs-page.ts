/**
 * A self-contained API reference page rendered on the server from the OpenAPI document:
 * no script or stylesheet from a CDN, so it works offline and under a strict CSP.
 */
import { schemaType } from "../lib/schema-type";

interface Operation {
  summary?: string;
  description?: string;
  tags?: string[];
  parameters?: { name: string; in: string; required?: boolean; description?: string; schema?: unknown }[];
  requestBody?: { content?: Record<string, { schema?: unknown }> };
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: unknown }> }>;
}

export interface OpenApiDocument {
  info: { title: string; version: string; description?: string };
  paths?: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, unknown> };
}

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

const METHODS = ["get", "post", "put", "patch", "delete"];

/** Text of the document's descriptions: escaped, with its `code` spans as code. */
const prose = (text: string): string => escapeHtml(text).replace(/`([^`]+)`/g, "<code>$1</code>");

type Schema = Record<string, unknown>;

/** A schema's type in a few words, a `$ref` as a link to the schema it names. */
const typeText = (schema: unknown): string =>
  schemaType(schema, {
    ref: (name) => `<a href="#schema-${escapeHtml(name)}">${escapeHtml(name)}</a>`,
    value: (v) => `<code>${escapeHtml(JSON.stringify(v))}</code>`,
    text: escapeHtml,
    maxValues: 12,
  });

/** An object schema's fields as a table (name, type, required, default, description); null for any other schema. */
function fieldsTable(schema: Schema): string | null {
  const properties = schema.properties && typeof schema.properties === "object" ? Object.entries(schema.properties as Record<string, Schema>) : [];
  if (properties.length === 0) return null;
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const rows = properties.map(([name, field]) => {
    const fallback = "default" in field ? `<code>${escapeHtml(JSON.stringify(field.default))}</code>` : "";
    const description = typeof field.description === "string" ? prose(field.description) : "";
    return `<tr><td><code>${escapeHtml(name)}</code></td><td>${typeText(field)}</td><td>${required.has(name) ? "yes" : ""}</td><td>${fallback}</td><td>${description}</td></tr>`;
  });
  return `<table><thead><tr><th>field</th><th>type</th><th>required</th><th>default</th><th>description</th></tr></thead><tbody>${rows.join("")}</tbody></table>`;
}

/** A schema as people read it: its fields, or its type; the JSON itself behind a toggle, its `$ref`s linked. */
function schemaBlock(schema: unknown): string {
  if (schema === undefined) return "";
  const s = (schema ?? {}) as Schema;
  const text = escapeHtml(JSON.stringify(schema, null, 2));
  const linked = text.replace(/&#34;#\/components\/schemas\/([A-Za-z0-9_]+)&#34;/g, (match, name: string) => `<a href="#schema-${name}">${match}</a>`);
  const summary = typeof s.description === "string" ? `<p>${prose(s.description)}</p>` : "";
  const view = fieldsTable(s) ?? `<p>${typeText(s)}</p>`;
  return `${summary}${view}<details><summary>JSON Schema</summary><pre>${linked}</pre></details>`;
}

function renderOperation(path: string, method: string, op: Operation): string {
  const params = (op.parameters ?? [])
    .map((p) => `<li><code>${escapeHtml(p.name)}</code> (${p.in}${p.required ? ", required" : ""})${p.description ? ` — ${prose(p.description)}` : ""}</li>`)
    .join("");
  const body = op.requestBody?.content?.["application/json"]?.schema;
  const responses = Object.entries(op.responses ?? {})
    .map(([status, r]) => {
      const schema = r.content?.["application/json"]?.schema;
      return `<li><b>${status}</b> ${prose(r.description ?? "")}${schema ? schemaBlock(schema) : ""}</li>`;
    })
    .join("");
  const id = `${method}-${path}`.replace(/[^a-z0-9]+/gi, "-");
  return `<section id="${id}">
<h3><span class="m ${method}">${method.toUpperCase()}</span> <code>${escapeHtml(path)}</code></h3>
${op.summary ? `<p>${prose(op.summary)}</p>` : ""}
${op.description ? `<p>${prose(op.description)}</p>` : ""}
${params ? `<h4>Parameters</h4><ul>${params}</ul>` : ""}
${body ? `<h4>Request body</h4>${schemaBlock(body)}` : ""}
<h4>Responses</h4><ul>${responses}</ul>
</section>`;
}

export function renderDocsPage(doc: OpenApiDocument): string {
  const ops: string[] = [];
  const toc: string[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      ops.push(renderOperation(path, method, op));
      const id = `${method}-${path}`.replace(/[^a-z0-9]+/gi, "-");
      toc.push(`<li><a href="#${id}"><span class="m ${method}">${method.toUpperCase()}</span> ${escapeHtml(path)}</a></li>`);
    }
  }
  const schemas = Object.entries(doc.components?.schemas ?? {})
    .map(([name, schema]) => `<section id="schema-${escapeHtml(name)}"><h3>${escapeHtml(name)}</h3>${schemaBlock(schema)}</section>`)
    .join("");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(doc.info.title)} reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font-family:system-ui,sans-serif;margin:0;display:flex;color:#1d1d1f}
nav{width:320px;height:100vh;overflow:auto;position:sticky;top:0;background:#f5f5f7;padding:1rem;box-sizing:border-box;font-size:14px}
nav ul{list-style:none;padding:0}nav li{margin:.3rem 0}nav a{color:inherit;text-decoration:none}
main{flex:1;padding:1rem 2rem;max-width:960px}section{border-bottom:1px solid #ddd;padding:.5rem 0}
pre{background:#f5f5f7;padding:.6rem;overflow:auto;font-size:12px;max-height:360px}
table{border-collapse:collapse;width:100%;font-size:13px;margin:.4rem 0}th,td{border-bottom:1px solid #e5e5ea;padding:.25rem .4rem;text-align:left;vertical-align:top}
th{background:#f5f5f7}details summary{cursor:pointer;font-size:12px;color:#555}code{font-size:.92em}
.m{display:inline-block;min-width:3.5em;font-weight:700;font-size:12px}.get{color:#0a7}.post{color:#06c}.put{color:#a60}.delete{color:#c22}
</style></head><body>
<nav><b>${escapeHtml(doc.info.title)}</b> <small>v${escapeHtml(doc.info.version)}</small>
<p><a href="/openapi.json">openapi.json</a></p><ul>${toc.join("")}</ul></nav>
<main><h1>${escapeHtml(doc.info.title)}</h1><p>${prose(doc.info.description ?? "")}</p>
<h2>Operations</h2>${ops.join("\n")}<h2>Schemas</h2>${schemas}</main></body></html>`;
}
