import { describe, expect, it } from "vitest";
import { request } from "./helpers";

describe("open routes and the error envelope", () => {
  it("answers /healthz", async () => {
    expect(await request("GET", "/healthz")).toMatchObject({ status: 200, body: { status: "ok" } });
  });

  it("serves an OpenAPI 3.1 document that lists every route", async () => {
    const doc = (await request("GET", "/openapi.json")).body;
    expect(doc.openapi).toBe("3.1.0");
    const routes = Object.entries(doc.paths as Record<string, object>).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m} ${p}`));
    expect(routes).toEqual(
      expect.arrayContaining([
        "post /v1/admin/tenants",
        "post /v1/admin/tenants/{tenant_id}/keys",
        "delete /v1/admin/keys/{key_id}",
        "put /v1/providers/{provider}",
        "get /v1/providers",
        "delete /v1/providers/{provider}",
        "post /v1/map",
        "get /v1/jobs",
        "get /v1/jobs/{job_id}",
        "get /v1/jobs/{job_id}/results",
        "get /v1/jobs/{job_id}/batch",
        "get /v1/jobs/{job_id}/events",
        "post /v1/jobs/{job_id}/cancel",
        "get /v1/jobs/{job_id}/webhook-deliveries",
        "post /v1/jobs/{job_id}/webhook-deliveries/redeliver",
        "get /v1/webhook-secret",
        "post /v1/webhook-secret/rotate",
        "post /v1/agentic-map",
        "get /v1/sessions/{session_id}",
        "get /v1/jobs/{job_id}/sessions",
      ]),
    );
    expect(doc.components.schemas.MapRequest.properties.concurrency).toMatchObject({ minimum: 1, maximum: 1000, default: 16 });
  });

  it("renders the API reference at /docs without external assets", async () => {
    const res = await request("GET", "/docs");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(res.body).toContain("/v1/map");
    expect(res.body).toContain(`<a href="#schema-MapRequest">`); // $refs link to their schemas
    expect(res.body).toContain(`id="schema-MapRequest"`);
    // Read as a reference: a request's fields as a table, the document's `code` as code, not backticks.
    const mapRequest = res.body.slice(res.body.indexOf(`id="schema-MapRequest"`));
    expect(mapRequest).toMatch(/<tr><td><code>concurrency<\/code><\/td><td>integer<\/td><td><\/td><td><code>16<\/code><\/td>/);
    expect(res.body).toContain("<code>/v1/filter</code>");
    expect(res.body).not.toMatch(/<p>[^<]*`[^`<]+`/); // no literal backticks left in prose
    expect(res.body).not.toMatch(/<script[^>]+src=/);
  });

  it("uses the envelope for unknown routes (404) and wrong methods (405)", async () => {
    expect(await request("GET", "/nope")).toMatchObject({ status: 404, body: { error: { code: "not_found" } } });
    const wrong = await request("DELETE", "/healthz");
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get("allow")).toBe("GET");
    expect(wrong.body.error.code).toBe("method_not_allowed");
  });
});
