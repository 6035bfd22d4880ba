import { describe, expect, it } from "vitest";
import { batchItemsProblem, batchResult, checkBatch } from "../../src/operators/pipeline/batch";

describe("batch nodes: submission checks (the contract's messages, verbatim)", () => {
  const messages = (batch: unknown) => checkBatch(batch, "steps[2]", 10_000).issues.map((i) => [i.path, i.message]);

  it("accepts a reference with the defaults", () => {
    expect(checkBatch({ items: "${list.files}" }, "steps[0]", 10_000)).toEqual({
      settings: { items: "${list.files}", as: "item", errorHandling: "fail_fast", maxConcurrent: 16, maxItems: 10_000 },
      issues: [],
    });
  });

  it("names each problem at its field", () => {
    expect(messages({})).toEqual([["steps[2].batch.items", "batch.items is required"]]);
    expect(messages({ items: "list.files" })).toEqual([["steps[2].batch.items", "batch.items must be a template reference"]]);
    expect(messages({ items: "${x}", as: "2nd" })).toEqual([["steps[2].batch.as", "batch.as must be a valid identifier"]]);
    expect(messages({ items: "${x}", error_handling: "retry" })).toEqual([
      ["steps[2].batch.error_handling", "batch.error_handling must be 'fail_fast' or 'continue'"],
    ]);
    expect(messages({ items: "${x}", max_concurrent: 0 })[0]?.[0]).toBe("steps[2].batch.max_concurrent");
    expect(messages({ items: "${x}", max_concurrent: 129 })[0]?.[0]).toBe("steps[2].batch.max_concurrent");
    expect(messages({ items: "${x}", parallel: true })).toEqual([["steps[2].batch.parallel", "unknown field batch.parallel"]]);
  });
});

describe("batch nodes: results", () => {
  it("says what a non-list resolved to", () => {
    expect(batchItemsProblem([], 3)).toBeNull();
    expect(batchItemsProblem({ a: 1 }, 3)).toBe("Batch items must be an array, got object");
    expect(batchItemsProblem("s", 3)).toBe("Batch items must be an array, got string");
    expect(batchItemsProblem(null, 3)).toBe("Batch items must be an array, got null");
  });

  it("holds a batch to a job's worth of items", () => {
    expect(batchItemsProblem([1, 2, 3], 3)).toBeNull();
    expect(batchItemsProblem([1, 2, 3, 4], 3)).toBe("Batch items hold 4 elements; a batch takes at most 3 (this deployment's MAX_ITEMS_PER_JOB)");
  });

  it("keeps input order, counts, null for failed elements, errors null when none, and JSON null as a success", () => {
    expect(batchResult([])).toEqual({ results: [], count: 0, success_count: 0, error_count: 0, errors: null });
    const r = batchResult([
      { item: "a", success: true, output: { n: 1 }, error: null },
      { item: "b", success: false, output: null, error: "timeout" },
      { item: "c", success: true, output: null, error: null },
    ]);
    expect(r).toEqual({ results: [{ n: 1 }, null, null], count: 3, success_count: 2, error_count: 1, errors: [{ index: 1, item: "b", error: "timeout" }] });
  });
});
