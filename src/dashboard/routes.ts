/**
 * The dashboard's routes: `/` (jobs), `/new`, `/jobs/{id}` and `/sessions/{id}`, each a page
 * rendered on the server with a strict Content-Security-Policy: scripts and styles from this
 * origin only (the modules under /dash/, served as static assets), no inline script or style,
 * no third-party origin, no framing.
 */
import { Hono, type Context } from "hono";
import type { AppEnv } from "../app-env";
import { dashboardPage, type Page } from "./pages";

export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join("; ");

const ID = /^[A-Za-z0-9_-]{1,100}$/;

function render(c: Context<AppEnv>, name: Page) {
  const id = c.req.param("id");
  c.header("content-security-policy", DASHBOARD_CSP);
  c.header("x-content-type-options", "nosniff");
  c.header("referrer-policy", "no-referrer");
  c.header("cache-control", "no-store");
  if (id !== undefined && !ID.test(id)) return c.html(dashboardPage(name), 404);
  return c.html(dashboardPage(name, id));
}

export function dashboardRoutes() {
  return new Hono<AppEnv>()
    .get("/", (c) => render(c, "jobs"))
    .get("/new", (c) => render(c, "new"))
    .get("/jobs/:id", (c) => render(c, "job"))
    .get("/sessions/:id", (c) => render(c, "session"));
}
