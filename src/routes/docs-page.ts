/**
 * A self-contained API reference page rendered on the server from the OpenAPI document:
 * no script or stylesheet from a CDN, so it works offline and under a strict CSP.
 */
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

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

const METHODS = ["get", "post", "put", "patch", "delete"];

/** Pretty JSON whose `$ref`s link to the schema they name, further down the page. */
function schemaBlock(schema: unknown): string {
  if (schema === undefined) return "";
  const text = escapeHtml(JSON.stringify(schema, null, 2));
  const linked = text.replace(/&#34;#\/components\/schemas\/([A-Za-z0-9_]+)&#34;/g, (match, name: string) => `<a href="#schema-${name}">${match}</a>`);
  return `<pre>${linked}</pre>`;
}

function renderOperation(path: string, method: string, op: Operation): string {
  const params = (op.parameters ?? [])
    .map(
      (p) =>
        `<li><code>${escapeHtml(p.name)}</code> (${p.in}${p.required ? ", required" : ""})${
          p.description ? ` — ${escapeHtml(p.description)}` : ""
        }</li>`,
    )
    .join("");
  const body = op.requestBody?.content?.["application/json"]?.schema;
  const responses = Object.entries(op.responses ?? {})
    .map(([status, r]) => {
      const schema = r.content?.["application/json"]?.schema;
      return `<li><b>${status}</b> ${escapeHtml(r.description ?? "")}${schema ? schemaBlock(schema) : ""}</li>`;
    })
    .join("");
  const id = `${method}-${path}`.replace(/[^a-z0-9]+/gi, "-");
  return `<section id="${id}">
<h3><span class="m ${method}">${method.toUpperCase()}</span> <code>${escapeHtml(path)}</code></h3>
${op.summary ? `<p>${escapeHtml(op.summary)}</p>` : ""}
${op.description ? `<p>${escapeHtml(op.description)}</p>` : ""}
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
.m{display:inline-block;min-width:3.5em;font-weight:700;font-size:12px}.get{color:#0a7}.post{color:#06c}.put{color:#a60}.delete{color:#c22}
</style></head><body>
<nav><b>${escapeHtml(doc.info.title)}</b> <small>v${escapeHtml(doc.info.version)}</small>
<p><a href="/openapi.json">openapi.json</a></p><ul>${toc.join("")}</ul></nav>
<main><h1>${escapeHtml(doc.info.title)}</h1><p>${escapeHtml(doc.info.description ?? "")}</p>
<h2>Operations</h2>${ops.join("\n")}<h2>Schemas</h2>${schemas}</main></body></html>`;
}
