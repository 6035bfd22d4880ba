/**
 * Operator steps of a pipeline (contract v3: filter, classify, rank and resolve are "also a
 * pipeline step type of the same name"), run in memory: each runs its operator's own plan over a
 * list of the shared store, under the step's path; its value feeds the next steps; failures are
 * the operator's to count; recover re-runs only what failed; problems are refused at the step's path.
 */
import { describe, expect, it } from "vitest";
import { pipelineOperator, STEPS, type PipelineJobSpec } from "../../../src/operators/pipeline/plan";
import { readSteps } from "../../../src/operators/pipeline/steps";
import { stepList } from "../../../src/operators/pipeline/step-list";
import type { TaskDefaults } from "../../../src/operators/task-call";
import type { TaskView } from "../../../src/engine/types";
import { taskEstimates } from "../../../src/engine/estimate-job";
import { DEFAULT_RENDER_LIMITS } from "../../../src/template/render-budget";
import { MemoryPlan, type Answer } from "./memory-plan";
import { base } from "./specs";

const DEFAULTS = {
  model: "openai/big",
  max_retries: 1,
  concurrency: 4,
  metadata: {},
  timeout_secs: 60,
  retry_guidance: "retry",
  temperature: 0,
  max_tokens: 50,
} as TaskDefaults;

function pipeline(inputs: Record<string, unknown>, steps: unknown[]): PipelineJobSpec {
  return { ...base("pipeline"), model: "openai/big", inputs, units: readSteps({} as Env, DEFAULTS, inputs, undefined, steps), format: "notes_only" };
}

const refused = (inputs: Record<string, unknown>, steps: unknown[]) => {
  try {
    pipeline(inputs, steps);
  } catch (err) {
    return err as { code: string; message: string; details: unknown; status?: number };
  }
  throw new Error("not refused");
};

const PAPERS = ["attention", "cooking", "transformers", "gardening", "bert"];
const aboutML = (item: unknown) => ["attention", "transformers", "bert"].includes(String(item));

describe("pipeline operator steps", () => {
  it("a filter step over the pipeline's inputs keeps items by the predicate; its value has the kept items; the next step reads them", () => {
    const spec = pipeline({ papers: PAPERS, topic: "ML" }, [
      { id: "screen", type: "filter", inputs_from: "${papers}", predicate_template: "Is {{ item }} about {{ topic }}?" },
      { id: "summary", type: "llm", prompt_template: "Summarize {{ screen.items }}" },
    ]);
    const seen: Record<string, unknown>[] = [];
    const run = new MemoryPlan(pipelineOperator, spec).start([]).run((task, vars): Answer => {
      seen.push(vars);
      if (task.stage === "screen/items") return { output: { keep: aboutML(vars.item), reason: "r" } };
      return { output: `summary of ${JSON.stringify(vars.screen)}` };
    });
    expect(run.dispatched).toEqual(["screen/items:0", "screen/items:1", "screen/items:2", "screen/items:3", "screen/items:4", "summary:0"]);
    expect(seen[0]).toMatchObject({ item: "attention", topic: "ML" }); // the store's names its template reads, and the operator's own
    const value = { kept: [0, 2, 4], dropped: 2, failed: 0, items: ["attention", "transformers", "bert"] };
    expect(run.reader.task(STEPS, 0)?.output).toEqual(value);
    expect(run.end).toMatchObject({ status: "completed", output: `summary of ${JSON.stringify(value)}` });
    // The plan says each stage's step; the list groups by it: one step, not a step per operator stage.
    const stages = pipelineOperator
      .plan(spec, [])
      .stages.map((s) => ({ name: s.name, step: s.step, status: "completed", usage: { input_tokens: 0, output_tokens: 0 } }));
    expect(stages.map((s) => [s.name, s.step])).toEqual([
      ["screen/items", "screen"],
      ["summary", "summary"],
      ["steps", undefined],
    ]);
    expect(stepList(stages, []).map((s) => s.step)).toEqual(["screen", "summary"]);
  });

  it("a classify step with a cascade over an earlier step's list: the cheaper model decides the sure items, the job's model the others; its value has each item's label", () => {
    const spec = pipeline({ raw: "R" }, [
      { id: "list", type: "llm", prompt_template: "{{ raw }}" },
      {
        id: "labels",
        type: "classify",
        inputs_from: "${list}",
        categories: [{ name: "pos" }, { name: "neg" }],
        cascade: { model: "openai/small", accept_above: 0.9 },
      },
    ]);
    const run = new MemoryPlan(pipelineOperator, spec).start([]).run((task, vars): Answer => {
      if (task.stage === "list") return { output: ["good", "bad", "meh"] };
      if (task.stage === "labels/cascade") return { output: { label: vars.item === "bad" ? "neg" : "pos", confidence: vars.item === "meh" ? 0.5 : 0.95 } };
      return { output: { label: "neg", confidence: 0.8 } };
    });
    expect(run.dispatched).toEqual(["list:0", "labels/cascade:0", "labels/cascade:1", "labels/cascade:2", "labels/items:2"]);
    expect(run.end?.output).toEqual({ counts: { pos: 1, neg: 2 }, failed: 0, decided_by: { cascade: 2, model: 1 }, labels: ["pos", "neg", "neg"] });
    expect(pipelineOperator.work(spec, "labels/cascade")).toMatchObject({ kind: "call", tenantId: spec.tenantId, call: { model: "openai/small" } });
    expect(pipelineOperator.work(spec, "labels/items")).toMatchObject({ call: { model: "openai/big" } });
  });

  it("a rank step over a filter's kept items: scores, ties at the cut compared; its value the top k with each item; k above the list's length lists them all", () => {
    const spec = pipeline({ papers: PAPERS }, [
      { id: "screen", type: "filter", inputs_from: "${papers}", predicate_template: "{{ item }}" },
      { id: "best", type: "rank", inputs_from: "${screen.items}", criteria: "novelty", k: 1 },
    ]);
    const run = new MemoryPlan(pipelineOperator, spec).start([]).run((task, vars): Answer => {
      if (task.stage === "screen/items") return { output: { keep: aboutML(vars.item) } };
      if (task.stage === "best/score") return { output: { score: vars.item === "attention" ? 5 : 9 } };
      return { output: { winner: "B" } }; // transformers vs bert: bert
    });
    expect(run.dispatched.filter((d) => d.startsWith("best/"))).toEqual(["best/score:0", "best/score:1", "best/score:2", "best/compare:0"]);
    expect(run.end?.output).toEqual([{ index: 2, score: 9, wins: 1, item: "bert" }]);

    const all = pipeline({ papers: ["a", "b"] }, [{ id: "best", type: "rank", inputs_from: "${papers}", criteria: "c", k: 5 }]);
    const ran = new MemoryPlan(pipelineOperator, all).start([]).run((_t, vars) => ({ output: { score: vars.item === "b" ? 2 : 1 } }));
    expect(ran.end?.output).toEqual([
      { index: 1, score: 2, item: "b" },
      { index: 0, score: 1, item: "a" },
    ]);
  });

  it("a resolve step closes matches transitively; over an earlier step's list, too many comparisons fail the step with the operator's code", () => {
    const records = [
      { n: "acme", g: 1 },
      { n: "ACME inc", g: 1 },
      { n: "acme co", g: 1 },
      { n: "globex", g: 2 },
    ];
    const spec = pipeline({ records }, [
      { id: "entities", type: "resolve", inputs_from: "${records}", comparison_template: "{{ item_a }} {{ item_b }}", blocking: { keys: ["g"] } },
    ]);
    const run = new MemoryPlan(pipelineOperator, spec).start([]).run((_t, vars): Answer => {
      const [a, b] = [vars.item_a as { n: string }, vars.item_b as { n: string }];
      return { output: { match: a.n === "acme" && b.n !== "acme co" ? true : b.n === "acme co" && a.n === "ACME inc" } };
    });
    expect(run.dispatched).toEqual(["entities/compare:0", "entities/compare:1", "entities/compare:2"]);
    expect(run.end?.output).toEqual({ clusters: [[0, 1, 2], [3]], resolved: null, failed: 0 });

    const late = pipeline({ raw: "R" }, [
      { id: "list", type: "llm", prompt_template: "{{ raw }}" },
      {
        id: "entities",
        type: "resolve",
        inputs_from: "${list}",
        comparison_template: "{{ item_a }} {{ item_b }}",
        blocking: { keys: ["g"] },
        max_comparisons: 2,
      },
    ]);
    const failed = new MemoryPlan(pipelineOperator, late).start([]).run(() => ({ output: records }));
    expect(failed.end).toMatchObject({ status: "failed", error: { code: "too_many_comparisons", step: "entities" } });
    expect(failed.end?.error?.message).toContain("more than 2 pairs");
  });

  it("a filter item that failed is counted, not the step's failure; recover re-runs only it, then the steps after", () => {
    const spec = pipeline({ papers: PAPERS }, [
      { id: "screen", type: "filter", inputs_from: "${papers}", predicate_template: "{{ item }}" },
      { id: "after", type: "llm", prompt_template: "{{ screen.kept }}" },
    ]);
    let broken = true;
    const answer = (task: TaskView, vars: Record<string, unknown>): Answer =>
      task.stage === "screen/items"
        ? broken && task.index === 1
          ? { error: "down" }
          : { output: { keep: aboutML(vars.item) } }
        : { output: `after ${JSON.stringify(vars.screen)}` };
    const run = new MemoryPlan(pipelineOperator, spec).start([]).run(answer);
    expect(run.end).toMatchObject({ status: "completed" });
    expect(run.reader.task(STEPS, 0)?.output).toMatchObject({ kept: [0, 2, 4], dropped: 1, failed: 1 });
    broken = false;
    run.dispatched.length = 0;
    expect(run.recover()).toBe(3); // the failed item, and the two steps' markers waiting on it
    run.run(answer);
    expect(run.dispatched).toEqual(["screen/items:1", "after:0"]);
    expect(run.reader.task(STEPS, 0)?.output).toMatchObject({ kept: [0, 2, 4], dropped: 2, failed: 0 });
  });

  it("estimates an operator step over the pipeline's inputs task by task (exact prompts for the first step), over a later list for one item", () => {
    const spec = pipeline({ papers: PAPERS }, [
      { id: "screen", type: "filter", inputs_from: "${papers}", predicate_template: "Keep {{ item }}?" },
      { id: "best", type: "rank", inputs_from: "${screen.items}", criteria: "c", k: 1 },
    ]);
    const estimate = taskEstimates(pipelineOperator, spec, pipelineOperator.plan(spec, []), DEFAULT_RENDER_LIMITS);
    expect(estimate.tasks.map((t) => t.stage)).toEqual([...PAPERS.map(() => "screen/items"), "best/score"]);
    expect(estimate.tasks[1]?.exact?.prompt).toBe("Keep cooking?");
    expect(estimate.tasks[5]?.exact).toBeNull();
  });
});

describe("pipeline operator steps: refused at the step's path", () => {
  const filter = (extra: Record<string, unknown>) => [{ id: "screen", type: "filter", inputs_from: "${papers}", predicate_template: "{{ item }}", ...extra }];
  it.each([
    [{ webhook: { url: "https://example.com" } }, "steps[0].webhook", "webhook is the job's"],
    [{ concurrency: 4 }, "steps[0].concurrency", "concurrency is the job's"],
    [{ batch: { items: "${papers}" } }, "steps[0].batch", "an operator step runs over its whole list"],
    [{ colour: "red" }, "steps[0].colour", "unknown field"],
    [{ inputs_from: "${nowhere}" }, "steps[0].inputs_from", 'unknown name "nowhere"'],
    [{ inputs_from: "${topic}" }, "steps[0].inputs_from", "must point at a list"],
    [{ cascade: { model: "openai/small", accept_above: 2 } }, "steps[0].cascade.accept_above", ""],
  ])("%j", (extra, path, message) => {
    const err = refused({ papers: PAPERS, topic: "t" }, filter(extra));
    expect(err.code).toBe("invalid_request");
    expect(err.details).toEqual(expect.arrayContaining([expect.objectContaining({ path, message: expect.stringContaining(message) })]));
  });

  it("the operator's own checks: a predicate that never reads item, cascade thresholds the wrong way round; too many comparisons over the pipeline's inputs is the route's 422", () => {
    expect(refused({ papers: PAPERS }, filter({ predicate_template: "no item" }))).toMatchObject({
      code: "template_missing_item",
      details: [{ path: "steps[0].predicate_template" }],
    });
    expect(refused({ papers: PAPERS }, filter({ cascade: { model: "openai/small", accept_above: 0.5, reject_below: 0.6 } }))).toMatchObject({
      code: "invalid_request",
      details: [{ path: "steps[0].cascade.reject_below" }],
    });
    const records = Array.from({ length: 10 }, () => ({ g: 1 }));
    const err = refused({ records }, [
      { id: "e", type: "resolve", inputs_from: "${records}", comparison_template: "{{ item_a }} {{ item_b }}", blocking: { keys: ["g"] }, max_comparisons: 5 },
    ]);
    expect(err).toMatchObject({ code: "too_many_comparisons", status: 422, details: { max_comparisons: 5, step: "steps[0]" } });
  });
});
