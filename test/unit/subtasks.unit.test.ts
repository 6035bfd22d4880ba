/** The spawn_subtask tool's pure parts: argument checks, refusals, fingerprints and the child's first message. */
import { describe, expect, it } from "vitest";
import { childPrompt, readSpawn, spawnFingerprint, spawnRefusal, type SpawnRequest } from "../../src/agent/subtasks";
import type { ChatMessage } from "../../src/llm/types";

const settings = { maxDepth: 5, maxTotalTokens: 1_000, timeoutMs: 60_000 };
const at = { depth: 1, ancestors: ["abc"], deadline: 10_000, chainTokens: 10 };

describe("spawn_subtask", () => {
  it("reads its arguments with the subtask defaults, and says what is wrong", () => {
    expect(readSpawn('{"description": "d", "inputs": {"a": 1}}')).toEqual({
      ok: true,
      request: { description: "d", inputs: { a: 1 }, inherit: "subset", accumulate: false, format: "notes_only" },
    });
    expect(
      readSpawn('{"description": "d", "context_management": {"inherit_context": "full", "accumulate_data": true, "accumulation_format": "full_output"}}'),
    ).toMatchObject({ ok: true, request: { inputs: {}, inherit: "full", accumulate: true, format: "full_output" } });
    expect(readSpawn("nope")).toEqual({ ok: false, message: "spawn_subtask: the arguments are not JSON" });
    expect(readSpawn('{"description": " "}')).toEqual({ ok: false, message: "spawn_subtask: description must be a non-empty string" });
    expect(readSpawn('{"description": "d", "inputs": [1]}')).toEqual({ ok: false, message: "spawn_subtask: inputs must be an object of named values" });
    expect(readSpawn(JSON.stringify({ description: "x".repeat(10_001) }))).toMatchObject({ ok: false });
    expect(readSpawn(JSON.stringify({ description: "d", inputs: { big: "x".repeat(64_001) } }))).toMatchObject({ ok: false });
    expect(readSpawn('{"description": "d", "context_management": {"inherit_context": "some"}}')).toEqual({
      ok: false,
      message: "spawn_subtask: inherit_context must be full, none or subset",
    });
  });

  it("fingerprints description and inputs whatever the key order", async () => {
    const req = (inputs: Record<string, unknown>): SpawnRequest => ({ description: "d ", inputs, inherit: "subset", accumulate: false, format: "notes_only" });
    expect(await spawnFingerprint(req({ a: 1, b: { c: 2, d: 3 } }))).toBe(await spawnFingerprint(req({ b: { d: 3, c: 2 }, a: 1 })));
    expect(await spawnFingerprint(req({ a: 1 }))).not.toBe(await spawnFingerprint(req({ a: 2 })));
  });

  it("refuses past the depth, a cycle, past the deadline and past the chain's tokens, in that order", () => {
    expect(spawnRefusal(settings, at, "new", 0)).toBeNull();
    expect(spawnRefusal(settings, { ...at, depth: 5 }, "abc", 20_000)).toMatch(/nest at most 5 levels deep, and this one would be level 6/);
    expect(spawnRefusal(settings, at, "abc", 20_000)).toMatch(/a cycle/);
    expect(spawnRefusal(settings, at, "new", 10_000)).toMatch(/time limit \(60 s\) has passed/);
    expect(spawnRefusal(settings, { ...at, chainTokens: 1_000 }, "new", 0)).toMatch(/used 1000 tokens of its 1000/);
    expect(spawnRefusal({ ...settings, maxTotalTokens: null }, { ...at, chainTokens: 1e9 }, "new", 0)).toBeNull();
  });

  it("writes the child's first message as its context management allows", () => {
    const history: ChatMessage[] = [
      { role: "user", content: "parent task" },
      { role: "assistant", content: "x".repeat(2_000) },
    ];
    const base: SpawnRequest = { description: "Find it", inputs: { q: 1 }, inherit: "subset", accumulate: false, format: "notes_only" };
    expect(childPrompt(base, history, ["earlier"])).toBe('Find it\n\nInputs:\n{\n  "q": 1\n}');
    expect(childPrompt({ ...base, inherit: "none" }, history, [])).toBe("Find it");
    const full = childPrompt({ ...base, inherit: "full" }, history, []);
    expect(full).toContain("The conversation of the agent that asked for this subtask:\nuser: parent task\nassistant: " + "x".repeat(1_000) + "…");
    expect(childPrompt({ ...base, inherit: "full", format: "full_output" }, history, [])).toContain("x".repeat(2_000));
    expect(childPrompt({ ...base, accumulate: true }, history, ["first answer", "second"])).toBe(
      'Find it\n\nInputs:\n{\n  "q": 1\n}\n\nAnswers of earlier subtasks:\n1. first answer\n2. second',
    );
  });
});
