/**
 * AgentSession: one per item of an agentic_map job (`ses_…`). Runs the multi-turn loop durably:
 * every message is stored here first (SQLite) and mirrored to D1; the loop's state is saved after
 * every turn, so a session that dies mid-turn (a restart) resumes from its stored history rather
 * than starting over. Transient provider errors inside a turn are retried with the map operator's
 * backoff (the wait is an alarm, not a sleep); timeouts are retried at once.
 *
 * Storage: `task` (the TaskRef), `work` (the agent's spec, fetched once from the coordinator),
 * `state` (SessionState: src/agent/session-state.ts), table `messages(seq, message, mirrored)`
 * (./agent/history.ts, with its copy to D1).
 * Lifecycle: begin → alarm claims the task (a stale dispatch does nothing) and runs turns → done →
 * report to the coordinator → task deleted.
 */
import { DurableObject } from "cloudflare:workers";
import { renderLimits } from "../src/config";
import { compactionCut, estimateTokens, summaryPrompt } from "../src/agent/compaction";
import type { AgentItemResult } from "../src/agent/result";
import {
  chainOf,
  chainOver,
  chainTokens,
  itemResult,
  keepSpan,
  newState,
  takeSpans,
  takeUnreported,
  type SessionSpec,
  type SessionState,
  type SpawnRecord,
} from "../src/agent/session-state";
import { agentSession, jobCoordinator } from "../src/objects";
import { openToolbox, ToolLoadError, type Toolbox } from "../src/agent/tools";
import { decideAfterTurn, trackCalls } from "../src/agent/turn-rules";
import { isThrottle, nextStep, type AttemptOutcome } from "../src/engine/retry-policy";
import { failureOutcome } from "../src/engine/attempt";
import type { StageWork, SubtaskSettings, SubtaskSpawn, TaskClaim, TaskRef } from "../src/engine/types";
import { childPrompt, readSpawn, SPAWN_TOOL, spawnFingerprint, spawnRefusal, spawnToolSpec } from "../src/agent/subtasks";
import { newId } from "../src/lib/ids";
import { callModel, resolveEndpoint } from "../src/llm/call-model";
import { headerOf } from "../src/llm/errors";
import { rateObservation } from "../src/llm/rate-headers";
import { parseModel } from "../src/llm/models";
import type { ChatMessage, ModelRequest, ModelResponse, ProviderEndpoint, ToolCall } from "../src/llm/types";
import { compileTemplate } from "../src/template/jinja";
import { SessionHistory, contextOf } from "./agent/history";
import { SessionPacing } from "./agent/pacing";

export class AgentSession extends DurableObject<Env> {
  #endpoint: ProviderEndpoint | null | undefined;
  #pacing: SessionPacing;
  #history: SessionHistory;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#history = new SessionHistory(ctx.storage.sql);
    this.#pacing = new SessionPacing(env);
  }

  /** The job is deleted: the history, state and task go (the table is made anew, empty). */
  async purge(): Promise<void> {
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    this.#history = new SessionHistory(this.ctx.storage.sql);
    this.#endpoint = undefined;
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
    let state = (await this.ctx.storage.get<SessionState>("state")) ?? this.#start(task, spec, claim.vars, claim.subtask ?? null);
    const chain = chainOf(state);
    if (chain.spawning && (await this.#childOutcome(chain.spawning.sessionId))) {
      chain.waiting = { toolCallId: chain.spawning.toolCallId, childSessionId: chain.spawning.sessionId };
      chain.spawning = null; // its report was taken, and the child has ended
    }
    if (chain.waiting) await this.#collectChild(state, chain.waiting);
    if (!state.done && !chain.spawning) state = await this.#runTurns(spec, task, state);
    if (chain.spawning) return this.#reportSpawn(coordinator, spec, task, state, chain.spawning);
    if (!state.done) return; // waiting for a retry: the alarm is set
    await this.#history.mirror(this.env.DB, spec, task, state);
    const usage = takeUnreported(state);
    const done = state.done as AgentItemResult;
    const details = { ...done } as Record<string, unknown>;
    const spans = takeSpans(state);
    const outcome: AttemptOutcome = done.success
      ? { kind: "success", output: done.output_text, usage, details, spans }
      : { kind: "permanent", error: done.error ?? "the sub-session failed", errorKind: done.error_kind ?? "llm_error", usage, details, spans };
    await coordinator.report({ stage: task.stage, index: task.index, token: task.token }, outcome);
    const current = await this.ctx.storage.get<TaskRef>("task");
    if (current?.token === task.token) await this.ctx.storage.delete("task");
  }

  /** The coordinator starts the child; this session's turn ends without holding anything (it is dispatched again when the child ends). */
  async #reportSpawn(
    coordinator: ReturnType<typeof jobCoordinator>,
    spec: SessionSpec,
    task: TaskRef,
    state: SessionState,
    spawning: SpawnRecord,
  ): Promise<void> {
    await this.#history.mirror(this.env.DB, spec, task, state);
    const spawn: SubtaskSpawn = {
      sessionId: spawning.sessionId,
      parentSessionId: spawning.parentSessionId,
      prompt: spawning.prompt,
      depth: spawning.depth,
      ancestors: spawning.ancestors,
      deadline: spawning.deadline,
      inheritedTokens: spawning.inheritedTokens,
    };
    const usage = takeUnreported(state);
    await coordinator.report({ stage: task.stage, index: task.index, token: task.token }, { kind: "spawn", spawn, usage, spans: takeSpans(state) });
    await this.#save(state); // what was reported; if this write is lost the tokens are reported again, never lost
  }

  /** A child's end as its parent reads it, or null while it has not ended. */
  async subtaskOutcome(): Promise<{ text: string; success: boolean; error: string | null; usage: { input: number; output: number } } | null> {
    const state = await this.ctx.storage.get<SessionState>("state");
    if (!state?.done) return null;
    const chain = chainOf(state);
    return {
      text: state.done.output_text,
      success: state.done.success,
      error: state.done.error,
      usage: { input: state.inputTokens + chain.children.input, output: state.outputTokens + chain.children.output },
    };
  }

  #childOutcome(sessionId: string) {
    return agentSession(this.env, sessionId).subtaskOutcome();
  }

  /** The child has ended: its answer (or its failure, as an error) is the spawn_subtask call's result. */
  async #collectChild(state: SessionState, waiting: { toolCallId: string; childSessionId: string }): Promise<void> {
    const chain = chainOf(state);
    const outcome = await this.#childOutcome(waiting.childSessionId);
    const content = !outcome
      ? "The subtask was lost before it answered."
      : outcome.success
        ? outcome.text
        : `The subtask failed: ${outcome.error ?? "no answer"}${outcome.text ? `\nIts last output: ${outcome.text}` : ""}`;
    this.#history.append({ role: "tool", tool_call_id: waiting.toolCallId, name: SPAWN_TOOL, content, ...(outcome?.success ? {} : { is_error: true }) });
    if (outcome) {
      chain.children.input += outcome.usage.input;
      chain.children.output += outcome.usage.output;
      if (outcome.success) chain.childAnswers.push(outcome.text);
    }
    chain.waiting = null;
    await this.#save(state);
  }

  /** A new session: its state, and its first message (the item's prompt, or a child's task). */
  #start(task: TaskRef, spec: SessionSpec, vars: Record<string, unknown>, subtask: SubtaskSpawn | null): SessionState {
    const state = newState(task, spec, subtask, Date.now());
    if (subtask) {
      this.#history.append({ role: "user", content: subtask.prompt });
      return state;
    }
    try {
      this.#history.append({
        role: "user",
        content: compileTemplate(spec.promptTemplate, "agent_prompt_template", [], renderLimits(this.env)).renderVars(vars),
      });
    } catch (err) {
      state.done = itemResult(state, { error: `The template could not be rendered for this item: ${String(err)}`, kind: "validation" });
    }
    return state;
  }

  async #save(state: SessionState): Promise<void> {
    await this.ctx.storage.put("state", state);
  }

  async #call(spec: SessionSpec, request: Omit<ModelRequest, "model" | "temperature" | "maxTokens" | "timeoutMs">): Promise<ModelResponse> {
    const model = parseModel(spec.model);
    this.#endpoint ??= await resolveEndpoint(this.env, spec.tenantId, model.provider);
    try {
      const response = await callModel(
        this.env,
        { ...request, model, temperature: spec.temperature, maxTokens: spec.maxTokens, timeoutMs: spec.timeoutMs },
        this.#endpoint,
      );
      await this.#pacing.observe(spec, response.rate);
      return response;
    } catch (err) {
      await this.#pacing.observe(
        spec,
        rateObservation((name) => headerOf(err, name)),
      );
      throw err;
    }
  }

  /** Folds older turns into a summary when the context is over budget. A failed summary is skipped. */
  async #compactIfNeeded(spec: SessionSpec, state: SessionState, history: ChatMessage[]): Promise<void> {
    if (spec.maxContextTokens === null || estimateTokens(contextOf(state, history), spec.systemPrompt) <= spec.maxContextTokens) return;
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
      const error = err instanceof ToolLoadError ? err.message : `Could not load the tools: ${err instanceof Error ? err.message : String(err)}`;
      state.done = itemResult(state, { error, kind: "tool_error" }); // no model was called
      await this.#save(state);
      return state;
    }
    try {
      for (;;) {
        if (await this.ctx.storage.get<boolean>("stopped")) {
          state.done = itemResult(state, { error: "The job was cancelled.", kind: "llm_error" });
          await this.#save(state);
          await this.#history.mirror(this.env.DB, spec, task, state);
          return { ...state, done: null }; // nothing to report: the coordinator has ended the job
        }
        const chain = chainOf(state);
        const over = chainOver(spec, state, Date.now());
        if (over) {
          state.done = itemResult(state, over);
          await this.#save(state);
          return state;
        }
        if (chain.pendingCalls.length > 0 && (await this.#processCalls(spec, state, toolbox))) {
          await this.#save(state);
          return state; // a child was asked for: report it
        }
        const history = this.#history.all();
        await this.#compactIfNeeded(spec, state, history);
        // The turn's call takes a lease of the rate pacer; without one, it waits as a throttle does (the alarm).
        const prompt = estimateTokens(contextOf(state, history), spec.systemPrompt);
        const waitMs = await this.#pacing.lease(spec, { tokens: prompt + (spec.maxTokens ?? 0), input: prompt, output: 0 });
        if (waitMs > 0) {
          await this.ctx.storage.setAlarm(Date.now() + waitMs);
          await this.#save(state);
          return state;
        }
        let response: ModelResponse;
        const started = Date.now();
        try {
          state.callAttempts++;
          response = await this.#call(spec, {
            system: spec.systemPrompt,
            messages: contextOf(state, history),
            tools: spec.subtasks ? [...toolbox.offered, spawnToolSpec] : toolbox.offered.length ? toolbox.offered : undefined,
          });
        } catch (err) {
          // The call tasks' rules (../src/engine/retry-policy.ts `nextStep`), not a copy: a rate-limit answer is
          // back-pressure (not against max_retries, up to max_wait_secs), a transient failure backs off, a timeout goes again at once.
          const outcome = failureOutcome(err, spec.timeoutMs);
          keepSpan(state, { kind: "chat", start: started, end: Date.now(), input: 0, output: 0, error: outcome.kind });
          const now = Date.now();
          const wait = { throttles: state.throttles ?? 0, since: state.throttledSince ?? null, maxWaitMs: spec.maxWaitMs, now };
          // `attempts` counts the throttled ones too, as a call task's do (nextStep takes them off for max_retries).
          const step = nextStep(outcome, state.callAttempts + wait.throttles, spec.maxRetries, Math.random, wait);
          if (isThrottle(outcome)) {
            state.callAttempts--;
            state.throttles = wait.throttles + 1;
            state.throttledSince = wait.since ?? now;
          } else state.throttledSince = null;
          if (step.step === "fail") state.done = itemResult(state, { error: step.error, kind: step.errorKind });
          else if (step.step === "retry" && step.delayMs === 0)
            continue; // a timeout: at once
          else if (step.step === "retry") await this.ctx.storage.setAlarm(now + step.delayMs);
          await this.#save(state);
          return state;
        }
        state.callAttempts = 0;
        state.throttledSince = null;
        keepSpan(state, {
          kind: "chat",
          start: started,
          end: Date.now(),
          input: response.usage.input_tokens,
          output: response.usage.output_tokens,
          finish: response.finishReason,
          ...(response.id ? { id: response.id } : {}),
          ...(response.responseModel ? { model: response.responseModel } : {}),
        });
        state.turns++;
        state.inputTokens += response.usage.input_tokens;
        state.outputTokens += response.usage.output_tokens;
        state.intermediate.push(response.text);
        this.#history.append({ role: "assistant", content: response.text, ...(response.toolCalls.length ? { tool_calls: response.toolCalls } : {}) });
        state.doom = trackCalls(state.doom, response.toolCalls);
        const decision = decideAfterTurn(
          {
            maxTurns: spec.maxTurns,
            continuationMessage: spec.continuationMessage,
            completionMarker: spec.completionMarker,
            maxTotalTokens: spec.maxTotalTokens,
          },
          response,
          { turns: state.turns, totalTokens: chainTokens(state), doom: state.doom },
        );
        if ("stop" in decision) {
          state.done = itemResult(state, null, decision.stop);
        } else if (decision.next === "tools") {
          chain.pendingCalls = response.toolCalls;
          if (await this.#processCalls(spec, state, toolbox)) {
            await this.#save(state);
            await this.#history.mirror(this.env.DB, spec, task, state);
            return state; // a child was asked for: report it
          }
        } else {
          this.#history.append({ role: "user", content: spec.continuationMessage });
        }
        await this.#save(state);
        await this.#history.mirror(this.env.DB, spec, task, state);
        if (state.done) return state;
      }
    } finally {
      await toolbox.close();
    }
  }

  /**
   * Runs the turn's tool calls still pending, in order. A `spawn_subtask` call that passes its
   * checks stops there (true): the session waits for the child, then goes on with the rest.
   */
  async #processCalls(spec: SessionSpec, state: SessionState, toolbox: Toolbox): Promise<boolean> {
    const chain = chainOf(state);
    while (chain.pendingCalls.length > 0) {
      const call = chain.pendingCalls[0] as ToolCall;
      if (call.name === SPAWN_TOOL && spec.subtasks) {
        const spawn = await this.#spawnFor(spec.subtasks, state, call);
        chain.pendingCalls.shift();
        if ("error" in spawn) {
          this.#history.append({ role: "tool", tool_call_id: call.id, name: call.name, content: spawn.error, is_error: true });
          continue;
        }
        chain.spawning = spawn;
        return true;
      }
      const started = Date.now();
      const result = await toolbox.call(call);
      keepSpan(state, { kind: "tool", name: call.name, start: started, end: Date.now(), ...(result.isError ? { error: true } : {}) });
      chain.pendingCalls.shift();
      this.#history.append({ role: "tool", tool_call_id: call.id, name: call.name, content: result.content, ...(result.isError ? { is_error: true } : {}) });
    }
    return false;
  }

  /** The child a spawn_subtask call asks for, or why it is refused (the model reads it as a tool error). */
  async #spawnFor(settings: SubtaskSettings, state: SessionState, call: ToolCall): Promise<SpawnRecord | { error: string }> {
    const chain = chainOf(state);
    const read = readSpawn(call.arguments);
    if (!read.ok) return { error: read.message };
    const fingerprint = await spawnFingerprint(read.request);
    const tokens = chain.inheritedTokens + chainTokens(state);
    const refusal = spawnRefusal(
      settings,
      { depth: chain.depth, ancestors: chain.ancestors, deadline: chain.deadline, chainTokens: tokens },
      fingerprint,
      Date.now(),
    );
    if (refusal) return { error: refusal };
    return {
      toolCallId: call.id,
      sessionId: newId("ses"),
      parentSessionId: state.sessionId,
      prompt: childPrompt(read.request, this.#history.all(), chain.childAnswers),
      depth: chain.depth + 1,
      ancestors: [...chain.ancestors, fingerprint],
      deadline: chain.deadline,
      inheritedTokens: tokens,
    };
  }
}
