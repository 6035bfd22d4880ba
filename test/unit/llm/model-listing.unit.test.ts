/**
 * The provider's own word on shutdowns (src/llm/model-listing.ts): a `GET /v1/models` answer read
 * into dated models, bounded in what it keeps; a body read only up to its bound
 * (src/net/read-limited.ts); and where the listing stands between the deployment's
 * MODEL_RETIREMENTS and the shipped table (src/llm/lifecycle.ts).
 */
import { describe, expect, it } from "vitest";
import { parseListing } from "../../../src/llm/model-listing";
import { textWithin } from "../../../src/net/read-limited";
import { retirementOf } from "../../../src/llm/lifecycle";

describe("a model listing", () => {
  it("keeps the models with a shutdown date, and nothing that is not one", () => {
    const text = JSON.stringify({
      object: "list",
      data: [
        { id: "gpt-4o", object: "model", shutdown_date: "2027-01-14" },
        { id: "gpt-6-luna", shutdown_date: null },
        { id: "gpt-x", shutdown_date: "soon" },
        { id: "gpt-y", shutdown_date: "2027-02-30x" },
        { id: 7, shutdown_date: "2027-01-14" },
        { id: "x".repeat(201), shutdown_date: "2027-01-14" },
        null,
      ],
    });
    expect(parseListing(text)).toEqual(new Map([["gpt-4o", "2027-01-14"]]));
    expect(parseListing("not json")).toBeNull();
    expect(parseListing(JSON.stringify({ data: "nope" }))).toBeNull();
    expect(parseListing("null")).toBeNull();
  });

  it("keeps at most 2,000 dated models of one answer", () => {
    const data = Array.from({ length: 2_500 }, (_, i) => ({ id: `m-${i}`, shutdown_date: "2030-01-01" }));
    expect(parseListing(JSON.stringify({ data }))?.size).toBe(2_000);
  });

  it("reads a body up to its bound, and refuses one past it without reading the rest", async () => {
    expect(await textWithin(new Response("hello"), 5)).toBe("hello");
    expect(await textWithin(new Response("hello!"), 5)).toBeNull();
    expect(await textWithin(new Response(null), 5)).toBe("");
  });

  it("stands between the deployment's table and the shipped one, keeping the shipped replacement", () => {
    const listed = new Map([
      ["gpt-4o", "2026-12-01"],
      ["gpt-6-sol", "2027-03-01"],
    ]);
    expect(retirementOf({}, "openai/gpt-4o", listed)).toEqual({ shutdown_date: "2026-12-01", replacement: "openai/gpt-6.1-sol" });
    expect(retirementOf({}, "openai/gpt-6-sol", listed)).toEqual({ shutdown_date: "2027-03-01", replacement: null });
    expect(retirementOf({}, "anthropic/gpt-6-sol", listed)).toBeNull(); // OpenAI's listing dates OpenAI's models only
    const env = { MODEL_RETIREMENTS: JSON.stringify({ "openai/gpt-6-sol": null }) };
    expect(retirementOf(env, "openai/gpt-6-sol", listed)).toBeNull(); // the deployment's word is the last
  });
});
