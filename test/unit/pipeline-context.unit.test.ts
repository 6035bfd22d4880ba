import { describe, expect, it } from "vitest";
import { effectiveContext, stepVariables } from "../../src/operators/pipeline/context";

describe("pipeline context management", () => {
  it("defaults by step type", () => {
    expect(effectiveContext("sequential", undefined, undefined)).toEqual({ inherit: "full", accumulate: true, format: "notes_only", subset: [] });
    expect(effectiveContext("llm", undefined, undefined)).toEqual({ inherit: "full", accumulate: false, format: "notes_only", subset: [] });
    expect(effectiveContext("agent", undefined, undefined)).toMatchObject({ inherit: "full", accumulate: false });
    expect(effectiveContext("reduce", undefined, undefined)).toMatchObject({ inherit: "none", accumulate: true });
  });

  it("applies the pipeline's settings, then the step's", () => {
    const pipeline = { inherit_context: "subset" as const, subset: ["a"], accumulation_format: "full_output" as const };
    expect(effectiveContext("llm", pipeline, undefined)).toEqual({ inherit: "subset", accumulate: false, format: "full_output", subset: ["a"] });
    expect(effectiveContext("llm", pipeline, { inherit_context: "none", accumulate_data: true })).toEqual({
      inherit: "none",
      accumulate: true,
      format: "full_output",
      subset: ["a"],
    });
  });

  it("builds the variables each dimension allows", () => {
    const store = { raw: "r", load: { notes: "loaded 3 files", files: 3 }, list: ["a", "b"] };
    const finished = [
      { step: "load", output: store.load },
      { step: "list", output: "x".repeat(1_500) },
    ];
    const full = stepVariables(effectiveContext("llm", undefined, undefined), store, { data: 1 }, finished);
    expect(full).toEqual({ ...store, data: 1 });
    const none = stepVariables(effectiveContext("reduce", undefined, undefined), store, { data: 1 }, finished);
    expect(none).toEqual({
      data: 1,
      accumulated: [
        { step: "load", notes: "loaded 3 files" },
        { step: "list", notes: `"${"x".repeat(999)}` },
      ],
    });
    const subset = stepVariables(
      effectiveContext("llm", { inherit_context: "subset", subset: ["raw", "missing"] }, { accumulation_format: "full_output", accumulate_data: true }),
      store,
      {},
      finished.slice(0, 1),
    );
    expect(subset).toEqual({ raw: "r", accumulated: [{ step: "load", output: store.load }] });
  });

  it("copies only the names the template reads, when they are known", () => {
    const store = { raw: "r", big: Array.from({ length: 1000 }, (_, i) => i), load: { notes: "n" } };
    const finished = [{ step: "load", output: store.load }];
    const context = effectiveContext("sequential", undefined, undefined); // full, with accumulated
    expect(stepVariables(context, store, { own: 1 }, finished, ["raw"])).toEqual({ raw: "r", own: 1 });
    expect(stepVariables(context, store, {}, finished, ["accumulated", "load"])).toEqual({ load: store.load, accumulated: [{ step: "load", notes: "n" }] });
  });
});
