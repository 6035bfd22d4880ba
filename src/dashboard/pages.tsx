/**
 * The dashboard's pages, rendered on the server with Hono's JSX: the layout, the sign-in form and
 * each page's frame. The tenant's data is fetched by the page's module (assets/dash/) with the
 * API key the user signed in with, which lives in the tab's sessionStorage (and the device's
 * localStorage when the user asks to be remembered): the server never sees a
 * dashboard session, so every page is the same for everyone and nothing here is secret.
 */
import type { Child } from "hono/jsx";

export type Page = "jobs" | "job" | "session" | "new";

const TITLES: Record<Page, string> = { jobs: "Jobs", job: "Job", session: "Agent session", new: "New map job" };

function Layout(props: { page: Page; id?: string; children?: Child }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${TITLES[props.page]} · Fanout`}</title>
        <link rel="icon" href="/dash/icon.svg" type="image/svg+xml" />
        <link rel="stylesheet" href="/dash/app.css" />
        <script type="module" src="/dash/app.js"></script>
      </head>
      <body data-page={props.page} data-id={props.id ?? ""}>
        <a class="skip" href="#main">
          Skip to content
        </a>
        <header class="top">
          <a class="brand" href="/">
            Fanout
          </a>
          <nav aria-label="Dashboard">
            <a href="/" aria-current={props.page === "jobs" ? "page" : undefined}>
              Jobs
            </a>
            <a href="/new" aria-current={props.page === "new" ? "page" : undefined}>
              New job
            </a>
            <a href="/docs">API</a>
          </nav>
          <button type="button" id="sign-out" class="secondary" hidden>
            Sign out
          </button>
        </header>
        <main id="main" tabindex={-1}>
          <h1>{TITLES[props.page]}</h1>
          {props.children}
        </main>
      </body>
    </html>
  );
}

/** The sign-in form, shown by the page's module when no key is stored. */
function SignIn() {
  return (
    <form id="sign-in" class="card" hidden>
      <h2>Sign in</h2>
      <p>Use one of your tenant's API keys. It is kept in this tab (sessionStorage) and sent as the bearer token; tick the box to keep it on this device too (localStorage) until you sign out.</p>
      <label for="api-key">API key</label>
      <input id="api-key" name="key" type="password" autocomplete="off" required placeholder="fo_…" />
      <label class="check"><input id="remember-key" name="remember" type="checkbox" /> Remember this key on this device</label>
      <button type="submit">Sign in</button>
      <p id="sign-in-error" class="notice notice-error" role="alert" hidden></p>
    </form>
  );
}

export function dashboardPage(page: Page, id?: string): string {
  const html = (
    <Layout page={page} id={id}>
      <SignIn />
      <div id="view" aria-live="polite"></div>
      <noscript>
        <p>The dashboard needs JavaScript. The API works without it: see the API reference at /docs.</p>
      </noscript>
    </Layout>
  );
  return `<!doctype html>${String(html)}`;
}
