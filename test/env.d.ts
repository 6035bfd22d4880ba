/** Test-only bindings, added by vitest.integration.config.ts. */
declare namespace Cloudflare {
  interface Env {
    TEST_WEBHOOK_SINK: string; // a webhook receiver that answers 503
    TEST_MODEL_TARPIT: string; // a model endpoint that never answers (OPENAI_COMPATIBLE_BASE_URL too)
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
