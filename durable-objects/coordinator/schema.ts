/**
 * The coordinator's SQLite schema, versioned like D1's migrations: `meta.schema_version` holds the
 * number of migrations applied, and each runs once, in order, inside one transaction with the
 * version bump. An object created by an older deploy is brought up to date when it next wakes.
 *
 *   1  items(idx, …), events, outbox(idx, …)              — v1: one stage of independent items
 *   2  tasks(stage, idx, …), stages, outbox(stage, idx, …) — plans of stages; v1 items become
 *      the stage `items`, and a v1 spec is rewritten in the staged form
 *   3  tasks.losses — attempts lost with no report, so a task that takes its runtime down is
 *      quarantined after two (job-run.ts `lost`), whatever its max_retries
 *   4  tasks.throttles, tasks.throttled_since — rate-limit answers are back-pressure: they do not
 *      use up max_retries, and the task fails `rate_limited` only after the job's max wait
 *   5  stages.kind, stages.parent — what a stage is, in columns (an agent's children: `children`,
 *      with the stage of their parents' items); before, a name ending `.subtasks` said so, and a
 *      pipeline step of that id was taken for children. Stages of that name become children's
 *      stages when the stage before the suffix exists (what the old code did with them).
 *   6  tasks and stages: cache_read_tokens, cache_write_tokens (the provider's prompt cache, parts
 *      of input_tokens), cost_usd, unpriced_calls (calls on a model with no price: cost unknown);
 *      tasks.reserved_usd — the dollars a dispatch under way reserved against `token_budget.usd`
 *   7  batches (the provider batches of a job's batch stages: ./batch-table.ts); tasks.batch_id —
 *      the batch a running task is a line of (null: a slot's or a session's)
 *   8  stages.step (the pipeline step a stage is part of)
 *   9  batches.credential — the fingerprint of the credential that submitted the batch
 *      (src/llm/batch/owner.ts; null: submitted before it was kept); batches.cancelled_at — when
 *      its cancel was asked for
 *  10  tasks.handed — how many times the running dispatch was handed to its worker; a second
 *      hand (the first never reported: a restart mid-call) re-sends the call as one more attempt
 *  11  tasks.route — which model of its stage's fallback chain the task calls (0: the stage's own)
 *  12  outbox.event_id — a result's JSON is stored once, in its event; the row points at it
 *      (data '' then; rows from before keep their data)
 *  13  task_keys(stage, key, idx) — keys an operator files a task it finished itself under, read
 *      back by key (PlanReader `keyed`: an embedding blocking's buckets)
 *  14  the state indexes hold only the tasks in their state (partial): tasks_ready the pending,
 *      tasks_waiting the waiting, tasks_running (new) the running — a task's end and its next
 *      dispatch write fewer index pages in each commit (BENCHMARKS.md, "The dispatch's read
 *      recompiled at every call")
 */
type Migration = (sql: SqlStorage) => void;

const MIGRATIONS: Migration[] = [
  (sql) =>
    sql.exec(`
      CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS items (
        idx INTEGER PRIMARY KEY, input TEXT NOT NULL, state TEXT NOT NULL DEFAULT 'pending',
        attempts INTEGER NOT NULL DEFAULT 0, ready_at INTEGER NOT NULL DEFAULT 0, slot INTEGER, token TEXT,
        dispatched_at INTEGER, problems TEXT, input_tokens INTEGER NOT NULL DEFAULT 0,
        output_tokens INTEGER NOT NULL DEFAULT 0, session_id TEXT);
      CREATE TABLE IF NOT EXISTS events (id INTEGER PRIMARY KEY, name TEXT NOT NULL, data TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS outbox (idx INTEGER PRIMARY KEY, seq INTEGER NOT NULL, success INTEGER NOT NULL, data TEXT NOT NULL);`),
  (sql) => {
    sql.exec(`
      CREATE TABLE tasks (
        stage TEXT NOT NULL,
        idx INTEGER NOT NULL,
        input TEXT NOT NULL,
        state TEXT NOT NULL DEFAULT 'pending', -- blocked | pending | running | waiting | done
        priority INTEGER NOT NULL DEFAULT 0,
        attempts INTEGER NOT NULL DEFAULT 0,
        ready_at INTEGER NOT NULL DEFAULT 0,
        slot INTEGER,
        token TEXT,
        dispatched_at INTEGER,
        problems TEXT,
        input_tokens INTEGER NOT NULL DEFAULT 0,
        output_tokens INTEGER NOT NULL DEFAULT 0,
        reserved INTEGER NOT NULL DEFAULT 0, -- tokens reserved against the budget by the dispatch under way
        session_id TEXT,
        success INTEGER,
        output TEXT,
        error TEXT,
        error_kind TEXT,
        PRIMARY KEY (stage, idx));
      CREATE INDEX tasks_ready ON tasks (state, priority, idx, stage); -- dispatch order, read straight off the index
      CREATE INDEX tasks_waiting ON tasks (state, ready_at); -- backoffs that are due
      CREATE TABLE stages (
        name TEXT PRIMARY KEY, ord INTEGER NOT NULL, status TEXT NOT NULL, total INTEGER NOT NULL,
        completed INTEGER NOT NULL DEFAULT 0, succeeded INTEGER NOT NULL DEFAULT 0, failed INTEGER NOT NULL DEFAULT 0,
        input_tokens INTEGER NOT NULL DEFAULT 0, output_tokens INTEGER NOT NULL DEFAULT 0);
      INSERT INTO tasks (stage, idx, input, state, attempts, ready_at, slot, token, dispatched_at, problems,
          input_tokens, output_tokens, session_id)
        SELECT 'items', idx, input, state, attempts, ready_at, slot, token, dispatched_at, problems,
          input_tokens, output_tokens, session_id FROM items;
      DROP TABLE items;
      CREATE TABLE outbox2 (stage TEXT NOT NULL, idx INTEGER NOT NULL, seq INTEGER NOT NULL, success INTEGER NOT NULL,
        data TEXT NOT NULL, PRIMARY KEY (stage, idx));
      INSERT INTO outbox2 SELECT 'items', idx, seq, success, data FROM outbox;
      DROP TABLE outbox;
      ALTER TABLE outbox2 RENAME TO outbox;`);
    upgradeV1Spec(sql);
  },
  (sql) => sql.exec("ALTER TABLE tasks ADD COLUMN losses INTEGER NOT NULL DEFAULT 0"),
  (sql) => sql.exec("ALTER TABLE tasks ADD COLUMN throttles INTEGER NOT NULL DEFAULT 0; ALTER TABLE tasks ADD COLUMN throttled_since INTEGER"),
  (sql) =>
    sql.exec(`
      ALTER TABLE stages ADD COLUMN kind TEXT NOT NULL DEFAULT 'work';
      ALTER TABLE stages ADD COLUMN parent TEXT;
      UPDATE stages SET kind = 'children', parent = substr(name, 1, length(name) - length('.subtasks'))
        WHERE name LIKE '%.subtasks' AND substr(name, 1, length(name) - length('.subtasks')) IN (SELECT name FROM stages);`),
  (sql) => {
    for (const table of ["tasks", "stages"]) {
      sql.exec(`
        ALTER TABLE ${table} ADD COLUMN cache_read_tokens INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE ${table} ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE ${table} ADD COLUMN cost_usd REAL NOT NULL DEFAULT 0;
        ALTER TABLE ${table} ADD COLUMN unpriced_calls INTEGER NOT NULL DEFAULT 0;`);
    }
    sql.exec("ALTER TABLE tasks ADD COLUMN reserved_usd REAL NOT NULL DEFAULT 0");
  },
  (sql) =>
    sql.exec(`
      CREATE TABLE batches (
        id TEXT PRIMARY KEY, stage TEXT NOT NULL, provider TEXT NOT NULL, provider_batch_id TEXT,
        status TEXT NOT NULL, -- submitting | running | ended | failed
        provider_status TEXT, requests INTEGER NOT NULL, completed INTEGER NOT NULL DEFAULT 0, failed INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL, submitted_at INTEGER, ended_at INTEGER, next_poll_at INTEGER NOT NULL DEFAULT 0,
        polls INTEGER NOT NULL DEFAULT 0, cancel_requested INTEGER NOT NULL DEFAULT 0);
      ALTER TABLE tasks ADD COLUMN batch_id TEXT;
      CREATE INDEX tasks_batch ON tasks (batch_id) WHERE batch_id IS NOT NULL;`),
  // The step a stage is part of (a pipeline's): a fact, so its name is for people only.
  (sql) => sql.exec("ALTER TABLE stages ADD COLUMN step TEXT"),
  // The credential a provider batch belongs to: it is polled, read and cancelled with that one only.
  (sql) => sql.exec("ALTER TABLE batches ADD COLUMN credential TEXT; ALTER TABLE batches ADD COLUMN cancelled_at INTEGER"),
  // How many times a running dispatch was handed to its worker: a second hand re-sends its call, counted.
  (sql) => sql.exec("ALTER TABLE tasks ADD COLUMN handed INTEGER NOT NULL DEFAULT 0"),
  // Which model of its stage's fallback chain a task calls: one more each time its model was unavailable.
  (sql) => sql.exec("ALTER TABLE tasks ADD COLUMN route INTEGER NOT NULL DEFAULT 0"),
  // A result's JSON once: its outbox row points at its event, whose data ends with it.
  (sql) => sql.exec("ALTER TABLE outbox ADD COLUMN event_id INTEGER"),
  // Keys an operator files its own tasks under (an index it reads back by key, bounded by its own limit).
  (sql) =>
    sql.exec(
      "CREATE TABLE IF NOT EXISTS task_keys (stage TEXT NOT NULL, key TEXT NOT NULL, idx INTEGER NOT NULL, PRIMARY KEY (stage, key, idx)) WITHOUT ROWID",
    ),
  // Each state index holds its state's tasks only; a query uses one when it names the state as a literal.
  (sql) =>
    sql.exec(`
      DROP INDEX IF EXISTS tasks_ready;
      DROP INDEX IF EXISTS tasks_waiting;
      DROP INDEX IF EXISTS tasks_running;
      CREATE INDEX tasks_ready ON tasks (priority, idx, stage) WHERE state = 'pending';
      CREATE INDEX tasks_waiting ON tasks (ready_at) WHERE state = 'waiting';
      CREATE INDEX tasks_running ON tasks (slot) WHERE state = 'running';`),
];

type Row = Record<string, unknown>;

/** A job stored by a v1 deploy: its flat spec becomes the staged one, its items the stage `items`. */
function upgradeV1Spec(sql: SqlStorage): void {
  const row = sql.exec<{ v: string }>("SELECT v FROM meta WHERE k = 'spec'").toArray()[0];
  if (!row) return;
  const old = JSON.parse(row.v) as Row;
  if ("call" in old || "agent" in old) return;
  const base = {
    jobId: old.jobId,
    tenantId: old.tenantId,
    type: old.type,
    model: old.model,
    concurrency: old.concurrency,
    maxRetries: old.maxRetries,
    webhook: old.webhook,
    budget: null,
  };
  const shared = {
    model: old.model,
    systemPrompt: old.systemPrompt,
    promptTemplate: old.promptTemplate,
    temperature: old.temperature,
    maxTokens: old.maxTokens,
    timeoutMs: old.timeoutMs,
  };
  const spec =
    old.type === "map"
      ? {
          ...base,
          call: {
            ...shared,
            templateField: "prompt_template",
            outputSchema: old.outputSchema,
            retryGuidance: old.retryGuidance,
            maxOutputBytes: old.maxOutputBytes,
          },
        }
      : {
          ...base,
          agent: {
            ...shared,
            maxRetries: old.maxRetries,
            maxTurns: old.maxTurns,
            continuationMessage: old.continuationMessage,
            completionMarker: old.completionMarker,
            readOnly: old.readOnly,
            tools: old.tools,
            maxContextTokens: old.maxContextTokens,
            maxTotalTokens: old.maxTotalTokens,
          },
        };
  sql.exec("UPDATE meta SET v = ? WHERE k = 'spec'", JSON.stringify(spec));
  const total = sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM tasks").one().n;
  const done = sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM tasks WHERE state = 'done'").one().n;
  sql.exec("INSERT INTO stages (name, ord, status, total, completed) VALUES ('items', 0, 'running', ?, ?)", total, done);
}

export const SCHEMA_VERSION = MIGRATIONS.length;

/** Applies the migrations this object has not seen yet. */
export function migrate(storage: DurableObjectStorage): void {
  const sql = storage.sql;
  sql.exec("CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL)");
  const row = sql.exec<{ v: string }>("SELECT v FROM meta WHERE k = 'schema_version'").toArray()[0];
  let version = row ? Number(JSON.parse(row.v)) : legacyVersion(sql);
  while (version < MIGRATIONS.length) {
    const migration = MIGRATIONS[version] as Migration;
    storage.transactionSync(() => {
      migration(sql);
      version++;
      sql.exec("INSERT OR REPLACE INTO meta (k, v) VALUES ('schema_version', ?)", JSON.stringify(version));
    });
  }
}

/** Objects from before versioning have migration 1's tables (with a spec) or nothing. */
function legacyVersion(sql: SqlStorage): number {
  const items = sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'items'").one().n;
  return items > 0 ? 1 : 0;
}
