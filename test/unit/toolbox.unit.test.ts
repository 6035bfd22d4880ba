/** The toolbox's refusals happen before any request: nothing is sent for a refused call. */
import { describe, expect, it } from "vitest";
import { openToolbox } from "../../src/agent/tools";

const unreachable = "http://127.0.0.1:1/never-called"; // a request here would fail with another message

const tools = [
  { type: "http" as const, name: "read", description: "", input_schema: { type: "object" }, url: unreachable, read_only: true },
  { type: "http" as const, name: "write", description: "", input_schema: { type: "object" }, url: unreachable, read_only: false },
];

describe("toolbox", () => {
  it("offers every tool normally and only read-only ones in a read-only session", async () => {
    expect((await openToolbox(tools, false, {})).offered.map((t) => t.name)).toEqual(["read", "write"]);
    expect((await openToolbox(tools, true, {})).offered.map((t) => t.name)).toEqual(["read"]);
  });

  it("refuses a write tool in a read-only session without calling it", async () => {
    const box = await openToolbox(tools, true, {});
    expect(await box.call({ id: "1", name: "write", arguments: "{}" })).toEqual({
      content: 'The tool "write" is not available: this session is read-only.',
      isError: true,
    });
  });

  it("reports unknown tools and malformed arguments to the model", async () => {
    const box = await openToolbox(tools, false, {});
    expect(await box.call({ id: "1", name: "nope", arguments: "{}" })).toEqual({ content: 'There is no tool named "nope".', isError: true });
    expect(await box.call({ id: "1", name: "read", arguments: "{not json" })).toEqual({ content: "The arguments are not valid JSON.", isError: true });
    expect(await box.call({ id: "1", name: "read", arguments: "[1]" })).toEqual({ content: "The arguments must be a JSON object.", isError: true });
  });

  it("reports a tool that cannot be reached as a tool error", async () => {
    const box = await openToolbox(tools, false, {});
    const result = await box.call({ id: "1", name: "read", arguments: '{"q":"x"}' });
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/^the tool request failed/);
  });
});
