/**
 * The durability floor (`npm run bench:floor`): the least a job of one model call per item does on
 * this runtime with Fanout's guarantees, and nothing else. A coordinator object owns the tasks in
 * SQLite (a task is running under a dispatch token, then done with its output; an event per
 * result), one call object per slot stores its task with its outcome (one commit per call) and
 * reports it by RPC, and the report's answer is the slot's next task. Reports that arrive together
 * are handled in one turn (one commit), as Fanout's are. No templates, output checks, pacing,
 * budgets, event stream, D1 copy or webhooks: what Fanout costs above this is its own.
 */
import { DurableObject } from "cloudflare:workers";
import { ALL_PARTS, type Parts } from "./parts";

interface Env {
  COORD: DurableObjectNamespace<Coord>;
  CALL: DurableObjectNamespace<Call>;
}

interface TaskRef {
  job: string;
  idx: number;
  token: string;
  model: string;
  url: string; // the model server's Chat Completions URL
  prompt: string;
  parts: Parts;
  share?: string[]; // without reports: the prompts this slot runs
}

export class Coord extends DurableObject<Env> {
  #sql = this.ctx.storage.sql;
  #model = "";
  #url = "";
  #job = "";
  #queued: (() => void)[] = [];
  #parts: Parts = ALL_PARTS;
  #pending: string[] = []; // without SQL: the prompts not yet handed out
  #done = 0; // the calls reported (this object's life is the bench's)
  #total = 0;
  #waiting: (() => void)[] = []; // `/wait` requests: answered when every task is done

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS tasks (idx INTEGER PRIMARY KEY, state TEXT NOT NULL, token TEXT, input TEXT NOT NULL, output TEXT);
      CREATE INDEX IF NOT EXISTS tasks_state ON tasks (state, idx);
      CREATE TABLE IF NOT EXISTS events (id INTEGER PRIMARY KEY, data TEXT NOT NULL)`);
  }

  async start(job: string, model: string, url: string, prompts: string[], concurrency: number, parts: Parts): Promise<void> {
    this.#job = job;
    this.#model = model;
    this.#url = url;
    this.#parts = parts;
    this.#total = prompts.length;
    if (parts.sql) this.#sql.exec("INSERT INTO tasks (idx, state, input) SELECT key, 'pending', value FROM json_each(?)", JSON.stringify(prompts));
    else this.#pending = [...prompts];
    for (let slot = 0; slot < concurrency; slot++) {
      const share = parts.report ? undefined : prompts.filter((_, i) => i % concurrency === slot);
      const ref = share ? { job, idx: slot, token: "", model, url, prompt: "", parts, share } : this.#next();
      if (!ref) break;
      void this.env.CALL.get(this.env.CALL.idFromName(`${job}:${slot}`)).begin(ref);
    }
  }

  #next(): TaskRef | null {
    if (!this.#parts.sql) {
      const prompt = this.#pending.shift();
      return prompt === undefined ? null : { job: this.#job, idx: 0, token: "", model: this.#model, url: this.#url, prompt, parts: this.#parts };
    }
    const row = this.#sql.exec<{ idx: number; input: string }>("SELECT idx, input FROM tasks WHERE state = 'pending' ORDER BY idx LIMIT 1").toArray()[0];
    if (!row) return null;
    const token = crypto.randomUUID();
    this.#sql.exec("UPDATE tasks SET state = 'running', token = ? WHERE idx = ?", token, row.idx);
    return { job: this.#job, idx: row.idx, token, model: this.#model, url: this.#url, prompt: row.input, parts: this.#parts };
  }

  /** A call's outcome: stored once (a stale or repeated report changes nothing), with its event; the answer is the slot's next task. */
  report(idx: number, token: string, output: string): Promise<TaskRef | null> {
    return new Promise((resolve) => {
      this.#queued.push(() => {
        if (!this.#parts.sql) {
          this.#done++;
          resolve(this.#next());
          return this.#wake();
        }
        const done = this.#sql.exec(
          "UPDATE tasks SET state = 'done', output = ? WHERE idx = ? AND token = ? AND state = 'running'",
          output,
          idx,
          token,
        ).rowsWritten;
        if (done > 0) this.#sql.exec("INSERT INTO events (data) VALUES (?)", JSON.stringify({ name: "TASK_COMPLETED", idx, output }));
        resolve(this.#next());
        if (done > 0) {
          this.#done++;
          this.#wake();
        }
      });
      if (this.#queued.length === 1) setTimeout(() => this.#queued.splice(0).forEach((run) => run()), 0);
    });
  }

  /** Without reports: a call object's share is done. */
  shareDone(calls: number): void {
    this.#done += calls;
    this.#wake();
  }

  /** Resolves once every task is done (one request per job: a local request costs the runtime milliseconds, so the driver does not poll). */
  wait(): Promise<number> {
    return new Promise((resolve) => {
      this.#waiting.push(() => resolve(this.done()));
      this.#wake();
    });
  }

  #wake(): void {
    if (this.#total > 0 && this.done() >= this.#total) this.#waiting.splice(0).forEach((answer) => answer());
  }

  done(): number {
    return this.#done;
  }
}

export class Call extends DurableObject<Env> {
  async begin(ref: TaskRef): Promise<void> {
    void this.ctx.storage.put({ task: ref, outcome: null });
    void this.ctx.storage.setAlarm(Date.now());
  }

  override async alarm(): Promise<void> {
    let ref = await this.ctx.storage.get<TaskRef>("task");
    if (!ref) return;
    const coord = this.env.COORD.get(this.env.COORD.idFromName(ref.job));
    const call = async (task: TaskRef, prompt: string): Promise<string> => {
      const response = await fetch(task.url, {
        method: "POST",
        headers: { authorization: "Bearer sk-floor", "content-type": "application/json" },
        body: JSON.stringify({ model: task.model, messages: [{ role: "user", content: prompt }] }),
      });
      return response.text();
    };
    if (ref.share) {
      for (const prompt of ref.share) {
        const output = await call(ref, prompt);
        if (ref.parts.store) void this.ctx.storage.put({ outcome: { token: ref.token, output } }, { allowUnconfirmed: true });
      }
      await coord.shareDone(ref.share.length);
      return;
    }
    while (ref) {
      const output = await call(ref, ref.prompt);
      if (ref.parts.store) void this.ctx.storage.put({ task: ref, outcome: { token: ref.token, output } }, { allowUnconfirmed: true });
      ref = (await coord.report(ref.idx, ref.token, output)) ?? undefined;
    }
  }
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === "/healthz") return new Response("ok");
    const job = url.searchParams.get("job") ?? "job";
    const coord = env.COORD.get(env.COORD.idFromName(job));
    if (url.pathname === "/start") {
      const body = (await request.json()) as { model: string; modelUrl: string; prompts: string[]; concurrency: number; parts: Parts };
      await coord.start(job, body.model, body.modelUrl, body.prompts, body.concurrency, body.parts);
      return new Response("started");
    }
    if (url.pathname === "/wait") return Response.json({ done: await coord.wait() });
    return new Response("not found", { status: 404 });
  },
};
