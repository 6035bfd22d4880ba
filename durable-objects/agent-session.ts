/**
 * AgentSession: one per item of an agentic_map job (`ses_…`). Runs the multi-turn loop durably:
 * every message is stored here first (SQLite) and mirrored to D1; the loop's state is saved after
 * every turn, so a session that dies mid-turn (a restart) resumes from its stored history rather
 * than starting over. Transient provider errors inside a turn are retried with the map operator's
 * backoff (the wait is an alarm, not a sleep); timeouts are retried at once.
 *
 * Storage: `task` (the TaskRef), `work` (the agent's spec, fetched once from the coordinator),
 * `state` (SessionState), table `messages(seq, message, mirrored)`.
 * Lifecycle: begin → alarm claims the task (a stale dispatch does nothing) and runs turns → done →
 * report to the coordinator → task deleted.
 */
import { DurableObject } from "cloudflare:workers";
import { renderLimits } from "../src/config";
import { compactionCut, estimateTokens, summaryNote, summaryPrompt } from "../src/agent/compaction";
import type { AgentItemResult } from "../src/agent/result";
import { jobCoordinator } from "../src/objects";
import { openToolbox, type Toolbox } from "../src/agent/tools";
import { decideAfterTurn, trackCalls, type DoomTracker } from "../src/agent/turn-rules";
import { writeSession } from "../src/db/sessions";
import { transientDelayMs, type AttemptOutcome, type ErrorKind } from "../src/engine/retry-policy";
import type { AgentSpec, StageWork, TaskClaim, TaskRef } from "../src/engine/types";
import { callModel, resolveEndpoint } from "../src/llm/call-model";
import { classify, describeFailure, retryAfterMs } from "../src/llm/errors";
import { parseModel } from "../src/llm/models";
import type { ChatMessage, ModelRequest, ModelResponse, ProviderEndpoint } from "../src/llm/types";
import { compileTemplate } from "../src/template/jinja";

interface SessionState {
  sessionId: string;
  turns: number;
  inputTokens: number;
  outputTokens: number;
  intermediate: string[];
  compactions: number;
  summary: string | null;
  tailFrom: number; // context = message 0 + summary note + messages[tailFrom…]
  doom: DoomTracker;
  callAttempts: number; // attempts of the model call now under way
  done: AgentItemResult | null;
}

/** The agent's spec with the job it belongs to. */
type SessionSpec = AgentSpec & { jobId: string; tenantId: string };

const SCHEMA = "CREATE TABLE IF NOT EXISTS messages (seq INTEGER PRIMARY KEY, message TEXT NOT NULL, mirrored INTEGER NOT NULL DEFAULT 0)";

export class AgentSession extends DurableObject<Env> {
  #endpoint: ProviderEndpoint | null | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec(SCHEMA);
  }

  /** The job was cancelled: no further turn starts (the turn under way, if any, is the last). */
  async stop(): Promise<void> {
    await this.ctx.storage.put("stopped", true);
    await this.ctx.storage.deleteAlarm();
  }

  /** Takes (or takes back, after a lost dispatch) the task; the alarm does the work. */
  async begin(ref: TaskRef): Promise<void> {
    await this.ctx.storage.put("task", ref);
    await this.ctx.storage.setAlarm(Date.now());
  }

  override async alarm(): Promise<void> {
    const task = await this.ctx.storage.get<TaskRef>("task");
    if (!task?.sessionId) return;
    if (await this.ctx.storage.get<boolean>("stopped")) return;
    const coordinator = jobCoordinator(this.env, task.jobId);
    const claim = (await coordinator.claim(task.stage, task.index, task.token)) as TaskClaim | null; // RPC types drop `unknown`
    if (!claim) return; // a stale dispatch: the coordinator has moved on
    let work = await this.ctx.storage.get<StageWork>("work");
    if (!work) {
      work = ((await coordinator.work(task.stage)) as StageWork | null) ?? undefined;
      if (work?.kind !== "agent") return;
      await this.ctx.storage.put("work", work);
    }
    if (work.kind !== "agent") return;
    const spec: SessionSpec = { ...work.agent, jobId: task.jobId, tenantId: work.tenantId };
    let state = (await this.ctx.storage.get<SessionState>("state")) ?? this.#start(task, spec, claim.vars);
    if (!state.done) {
      state = await this.#runTurns(spec, task, state);
      if (!state.done) return; // waiting for a retry: the alarm is set
    }
    await this.#mirror(spec, task, state);
    const usage = { input_tokens: state.inputTokens, output_tokens: state.outputTokens };
    const done = state.done as AgentItemResult;
    const details = { ...done } as Record<string, unknown>;
    const outcome: AttemptOutcome = done.success
      ? { kind: "success", output: done.output_text, usage, details }
      : { kind: "permanent", error: done.error ?? "the sub-session failed", errorKind: done.error_kind ?? "llm_error", usage, details };
    await coordinator.report({ stage: task.stage, index: task.index, token: task.token }, outcome);
    const current = await this.ctx.storage.get<TaskRef>("task");
    if (current?.token === task.token) await this.ctx.storage.delete("task");
  }

  #start(task: TaskRef, spec: SessionSpec, vars: Record<string, unknown>): SessionState {
    const state: SessionState = {
      sessionId: task.sessionId as string,
      turns: 0,
      inputTokens: 0,
      outputTokens: 0,
      intermediate: [],
      compactions: 0,
      summary: null,
      tailFrom: 1,
      doom: { lastCall: null, repeats: 0 },
      callAttempts: 0,
      done: null,
    };
    try {
      this.#append({ role: "user", content: compileTemplate(spec.promptTemplate, "agent_prompt_template", [], renderLimits(this.env)).renderVars(vars) });
    } catch (err) {
      state.done = this.#result(state, { error: `The template could not be rendered for this item: ${String(err)}`, kind: "validation" });
    }
    return state;
  }

  #append(message: ChatMessage): void {
    this.ctx.storage.sql.exec("INSERT INTO messages (message) VALUES (?)", JSON.stringify(message));
  }

  #history(): ChatMessage[] {
    return this.ctx.storage.sql
      .exec<{ message: string }>("SELECT message FROM messages ORDER BY seq")
      .toArray()
      .map((r) => JSON.parse(r.message) as ChatMessage);
  }

  #context(state: SessionState, history: ChatMessage[]): ChatMessage[] {
    const first = history.slice(0, 1);
    const note: ChatMessage[] = state.summary ? [{ role: "user", content: summaryNote(state.summary) }] : [];
    return [...first, ...note, ...history.slice(state.tailFrom)];
  }

  #result(state: SessionState, failure: { error: string; kind: ErrorKind } | null, stopReason = "error"): AgentItemResult {
    return {
      session_id: state.sessionId,
      output_text: state.intermediate.at(-1) ?? "",
      success: failure === null,
      error: failure?.error ?? null,
      error_kind: failure?.kind ?? null,
      stop_reason: failure ? "error" : stopReason,
      turns: state.turns,
      token_usage: { input_tokens: state.inputTokens, output_tokens: state.outputTokens, total_tokens: state.inputTokens + state.outputTokens },
      intermediate_outputs: state.intermediate,
    };
  }

  async #save(state: SessionState): Promise<void> {
    await this.ctx.storage.put("state", state);
  }

  async #call(spec: SessionSpec, request: Omit<ModelRequest, "model" | "temperature" | "maxTokens" | "timeoutMs">): Promise<ModelResponse> {
    const model = parseModel(spec.model);
    this.#endpoint ??= await resolveEndpoint(this.env, spec.tenantId, model.provider);
    return callModel(
      this.env,
      { ...request, model, temperature: spec.temperature, maxTokens: spec.maxTokens, timeoutMs: spec.timeoutMs },
      this.#endpoint,
    );
  }

  /** Folds older turns into a summary when the context is over budget. A failed summary is skipped. */
  async #compactIfNeeded(spec: SessionSpec, state: SessionState, history: ChatMessage[]): Promise<void> {
    if (spec.maxContextTokens === null || estimateTokens(this.#context(state, history), spec.systemPrompt) <= spec.maxContextTokens) return;
    const cut = compactionCut(history, state.tailFrom);
    if (cut === null) return;
    try {
      const response = await this.#call(spec, {
        system: "You compress conversations faithfully.",
        messages: [{ role: "user", content: summaryPrompt(state.summary, history.slice(state.tailFrom, cut)) }],
      });
      state.inputTokens += response.usage.input_tokens;
      state.outputTokens += response.usage.output_tokens;
      state.summary = response.text;
      state.tailFrom = cut;
      state.compactions++;
    } catch (err) {
      console.error("compaction failed; continuing with the full context", err);
    }
  }

  async #runTurns(spec: SessionSpec, task: TaskRef, state: SessionState): Promise<SessionState> {
    let toolbox: Toolbox;
    try {
      toolbox = await openToolbox(spec.tools, spec.readOnly, this.env);
    } catch (err) {
      state.done = this.#result(state, { error: `Could not load the tools: ${String(err)}`, kind: "llm_error" });
      await this.#save(state);
      return state;
    }
    try {
      for (;;) {
        if (await this.ctx.storage.get<boolean>("stopped")) {
          state.done = this.#result(state, { error: "The job was cancelled.", kind: "llm_error" });
          await this.#save(state);
          await this.#mirror(spec, task, state);
          return { ...state, done: null }; // nothing to report: the coordinator has ended the job
        }
        const history = this.#history();
        await this.#compactIfNeeded(spec, state, history);
        let response: ModelResponse;
        try {
          state.callAttempts++;
          response = await this.#call(spec, {
            system: spec.systemPrompt,
            messages: this.#context(state, history),
            tools: toolbox.offered.length ? toolbox.offered : undefined,
          });
        } catch (err) {
          const failure = classify(err);
          const exhausted = state.callAttempts > spec.maxRetries;
          if (failure === "permanent" || exhausted) {
            state.done = this.#result(state, { error: describeFailure(err), kind: failure === "timeout" ? "timeout" : "llm_error" });
            await this.#save(state);
            return state;
          }
          if (failure === "transient") {
            const delay = transientDelayMs(state.callAttempts, retryAfterMs(err) ?? null, Math.random);
            await this.#save(state);
            await this.ctx.storage.setAlarm(Date.now() + delay);
            return state;
          }
          continue; // a timeout: retry at once
        }
        state.callAttempts = 0;
        state.turns++;
        state.inputTokens += response.usage.input_tokens;
        state.outputTokens += response.usage.output_tokens;
        state.intermediate.push(response.text);
        this.#append({ role: "assistant", content: response.text, ...(response.toolCalls.length ? { tool_calls: response.toolCalls } : {}) });
        state.doom = trackCalls(state.doom, response.toolCalls);
        const decision = decideAfterTurn(
          { maxTurns: spec.maxTurns, continuationMessage: spec.continuationMessage, completionMarker: spec.completionMarker, maxTotalTokens: spec.maxTotalTokens },
          response,
          { turns: state.turns, totalTokens: state.inputTokens + state.outputTokens, doom: state.doom },
        );
        if ("stop" in decision) {
          state.done = this.#result(state, null, decision.stop);
        } else if (decision.next === "tools") {
          for (const call of response.toolCalls) {
            const result = await toolbox.call(call);
            this.#append({ role: "tool", tool_call_id: call.id, name: call.name, content: result.content, ...(result.isError ? { is_error: true } : {}) });
          }
        } else {
          this.#append({ role: "user", content: spec.continuationMessage });
        }
        await this.#save(state);
        await this.#mirror(spec, task, state);
        if (state.done) return state;
      }
    } finally {
      await toolbox.close();
    }
  }

  /** Copies the session row and any new messages to D1; a failure is retried at the next turn. */
  async #mirror(spec: SessionSpec, task: TaskRef, state: SessionState): Promise<void> {
    const pending = this.ctx.storage.sql
      .exec<{ seq: number; message: string }>("SELECT seq, message FROM messages WHERE mirrored = 0 ORDER BY seq")
      .toArray();
    try {
      await writeSession(
        this.env.DB,
        {
          id: state.sessionId,
          jobId: spec.jobId,
          tenantId: spec.tenantId,
          index: task.index,
          status: state.done ? (state.done.success ? "completed" : "failed") : "running",
          stopReason: state.done?.stop_reason ?? null,
          turns: state.turns,
          inputTokens: state.inputTokens,
          outputTokens: state.outputTokens,
          compactions: state.compactions,
        },
        pending.map((p) => ({ seq: p.seq, message: JSON.parse(p.message) as ChatMessage })),
      );
      for (const p of pending) this.ctx.storage.sql.exec("UPDATE messages SET mirrored = 1 WHERE seq = ?", p.seq);
    } catch (err) {
      if (state.done) throw err; // the final mirror must land before the report
      console.error("mirroring the session to D1 failed; retrying at the next turn", err);
    }
  }
}
