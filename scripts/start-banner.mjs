// What `npm start` prints once the API answers, and the demo key it shows: kept in the local
// state (next to the database) and reused while it works; otherwise a tenant "demo" and a key
// are created with the admin token.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

async function post(base, token, path, body) {
  const res = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

export async function demoKey(base, adminToken, stateDir) {
  const file = join(stateDir, "fanout-demo-key");
  let saved = null;
  try {
    saved = readFileSync(file, "utf8").trim();
  } catch {
    // first start
  }
  if (saved && (await fetch(`${base}/v1/jobs?limit=1`, { headers: { authorization: `Bearer ${saved}` } })).ok) return saved;
  const tenant = await post(base, adminToken, "/v1/admin/tenants", { name: "demo" });
  const { key } = await post(base, adminToken, `/v1/admin/tenants/${tenant.id}/keys`, { name: "npm start" });
  mkdirSync(stateDir, { recursive: true });
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  return key;
}

export function banner({ base, key, adminToken, fake, demoTools }) {
  const models = fake
    ? "offline demo: openai/… and anthropic/… answer from the fake model server"
    : "real providers: set OPENAI_API_KEY / ANTHROPIC_API_KEY, or PUT /v1/providers/{provider}";
  const body = `{"inputs": ["Attention Is All You Need", "Deep Residual Learning"], "prompt_template": "Extract metadata from: {{ item }}", "model": "openai/gpt-6-luna"}`;
  return [
    "",
    `Fanout is running (${models})`,
    `  API        ${base}    (reference: ${base}/docs, OpenAPI: ${base}/openapi.json)`,
    `  Dashboard  ${base}/   (sign in with the demo key)`,
    key ? `  Demo key   ${key}   (tenant "demo"; admin token: ${adminToken})` : `  Admin      ${adminToken}`,
    "Next:",
    `  export BASE=${base} KEY=${key ?? "<an API key>"}${demoTools ? ` DEMO_TOOLS=${demoTools}` : ""}`,
    `  curl -s -X POST "$BASE/v1/map?wait=true" -H "Authorization: Bearer $KEY" -H 'content-type: application/json' -d '${body}'`,
    "",
  ].join("\n");
}
