/** The dashboard's pages: served without a key, the same for everyone, under a strict CSP; bad ids are 404. */
import { describe, expect, it } from "vitest";
import { request } from "./helpers";

describe("dashboard pages", () => {
  it.each([
    ["/", "jobs"],
    ["/new", "new"],
    ["/jobs/job_abc123", "job"],
    ["/sessions/ses_abc123", "session"],
  ])("GET %s renders the %s page with its module and a strict CSP", async (path, page) => {
    const res = await request("GET", path);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    const csp = res.headers.get("content-security-policy") ?? "";
    for (const directive of [
      "default-src 'none'",
      "script-src 'self'",
      "style-src 'self'",
      "connect-src 'self'",
      "frame-ancestors 'none'",
      "base-uri 'none'",
    ]) {
      expect(csp).toContain(directive);
    }
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    const html = String(res.body);
    expect(html.startsWith("<!doctype html>")).toBe(true);
    expect(html).toContain(`data-page="${page}"`);
    expect(html).toContain('<script type="module" src="/dash/app.js"></script>');
    expect(html).toContain('<label for="api-key">API key</label>');
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
  });

  it("escapes what it echoes and refuses ids that are not ids", async () => {
    const res = await request("GET", "/jobs/%3Cscript%3Ealert(1)%3C%2Fscript%3E");
    expect(res.status).toBe(404);
    expect(String(res.body)).not.toContain("<script>alert");
    expect(String(res.body)).toContain('data-id=""');
  });

  it("leaves the API's 404 for unknown paths alone", async () => {
    const res = await request("GET", "/nope");
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ error: { code: "not_found", message: "No such route." } });
  });
});
