/**
 * A batch's results matched to its lines (a repeated custom_id keeps its first valid answer; the
 * others are billed duplicates), and a results file read line by line within its bounds.
 */
import { describe, expect, it, vi } from "vitest";
import { matchResults } from "../../durable-objects/coordinator/batch-results";
import { streamLines } from "../../src/llm/batch/stream-lines";
import type { LineResult } from "../../src/llm/batch/types";
import type { AttemptOutcome } from "../../src/engine/retry-policy";

const usage = (output: number) => ({ input_tokens: 10, output_tokens: output });
const answer = (customId: string, text: string, output = 5): LineResult => ({ customId, kind: "answer", response: { text, usage: usage(output) } as never });
/** An answer is valid when its text is "ok". */
const outcomeOf = (r: LineResult): AttemptOutcome | null =>
  r.kind === "answer"
    ? r.response.text === "ok"
      ? { kind: "success", output: r.response.text, usage: r.response.usage }
      : { kind: "invalid", error: "bad", problems: ["bad"], usage: r.response.usage }
    : null;

describe("a batch's results matched to its lines", () => {
  it("keeps a repeated custom_id's first valid answer and counts every other answer of it as duplicated", () => {
    const error = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const value = matchResults([answer("s0-0", "bad", 1), answer("s0-0", "ok", 1_000), answer("s0-0", "ok", 7), answer("s0-1", "ok")], outcomeOf);
    const logged = error.mock.calls.map((c) => String(c[0]));
    error.mockRestore();
    expect(value.byId.get("s0-0")?.outcome).toMatchObject({ kind: "success", usage: usage(1_000) }); // the first valid one, not the last
    expect(value.repeats.map((r) => [r.customId, r.outcome.usage.output_tokens])).toEqual([
      ["s0-0", 1],
      ["s0-0", 7],
    ]); // billed all the same
    expect(value.byId.get("s0-1")?.outcome?.kind).toBe("success");
    expect(logged).toEqual([expect.stringMatching(/repeats 2 custom_id/)]);
  });

  it("a malformed repeat never replaces a valid answer", () => {
    vi.spyOn(console, "error").mockImplementationOnce(() => undefined);
    const matched = matchResults(
      [answer("s0-0", "ok", 9), answer("s0-0", "bad", 1), { customId: "s0-0", kind: "error", message: "x", permanent: true }],
      outcomeOf,
    );
    expect(matched.byId.get("s0-0")?.outcome).toMatchObject({ kind: "success", usage: usage(9) });
    expect(matched.repeats).toHaveLength(1); // the invalid answer was billed; the error line was not an answer
  });
});

/** A Response whose body arrives in the given chunks. */
function chunked(chunks: string[]): Response {
  const encoder = new TextEncoder();
  return new Response(
    new ReadableStream({
      start(c) {
        for (const chunk of chunks) c.enqueue(encoder.encode(chunk));
        c.close();
      },
    }),
  );
}

async function read(chunks: string[], left: number, lineMax: number) {
  const budget = { left, lineMax, cut: false };
  const lines: string[] = [];
  for await (const line of streamLines(chunked(chunks), budget)) lines.push(line);
  return { lines, cut: budget.cut };
}

describe("a results file read as it streams in", () => {
  it("yields its lines across chunk boundaries, the last one without a newline too", async () => {
    expect(await read(['{"a":', '1}\n{"b"', ":2}\n", '{"c":3}'], 1_000, 100)).toEqual({ lines: ['{"a":1}', '{"b":2}', '{"c":3}'], cut: false });
  });

  it("skips a line longer than its bound, wherever it is split, and keeps the next", async () => {
    const long = "x".repeat(50);
    expect((await read(["short\n", long.slice(0, 20), long.slice(20), "\nnext\n"], 1_000, 30)).lines).toEqual(["short", "next"]);
  });

  it("stops once it has read its budget of characters", async () => {
    const chunks = Array.from({ length: 100 }, (_, i) => `line ${i}\n`);
    const { lines, cut } = await read(chunks, 50, 100);
    expect(cut).toBe(true);
    expect(lines.length).toBeLessThan(10);
  });
});
