/** Test-only bindings, added by vitest.integration.config.ts. */
declare namespace Cloudflare {
  interface Env {
    TEST_WEBHOOK_SINK: string;
    TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
    MIGRATION_DB: D1Database; // an empty database, for tests of the migrations themselves
  }
}

/** Fixtures imported as text (Vite's `?raw`). */
declare module "*.xml?raw" {
  const text: string;
  export default text;
}
declare module "*.md?raw" {
  const text: string;
  export default text;
}
