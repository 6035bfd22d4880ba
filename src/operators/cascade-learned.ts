/**
 * A cascade with a target (./judge.ts runs it; the statistics: ../engine/cascade-target.ts). The
 * plan has a `sample` stage besides the cheaper model's `cascade` stage: the job's model (the
 * oracle) answers a seeded uniform sample of the items, in parallel with the cheaper calls. Once
 * both stages are done the thresholds are learned, and every item is decided at once: a sampled
 * item's answer is the oracle's (`decided_by: "sample"`), another's the cheaper model's when the
 * learned thresholds take it, else the job's model answers it. Everything is derived from the
 * stored tasks (the sample is the `sample` stage's tasks, drawn from the seed at plan time), so a
 * restart or a re-evaluation learns the same thresholds.
 */
import { drawSample, learnThresholds, type CascadeTarget, type Learned, type SamplePoint, type Thresholds } from "../engine/cascade-target";
import type { PlanReader, TaskSeed, TaskView } from "../engine/types";
import { sampleSizeOf } from "./cascade-field";

export const SAMPLE_STAGE = "sample";

/** What the target needs of an operator's answers. */
export interface TargetParts {
  /** The cheaper answer's score: filter its keep-confidence, classify its label's confidence (null: none, or the call failed). */
  score(answer: unknown | null): number | null;
  /** A sampled item as the statistics see it: the cheaper answer (null: failed) beside the oracle's. */
  point(cheap: unknown | null, oracle: unknown): SamplePoint;
}

/** The sampled items' tasks of a stage of `total` items. */
export function sampleTasks(target: CascadeTarget, inputs: unknown[]): TaskSeed[] {
  return drawSample(inputs.length, sampleSizeOf(target.sample, inputs.length), target.seed).map((index) => ({
    stage: SAMPLE_STAGE,
    index,
    input: inputs[index],
  }));
}

export interface LearnedState {
  learned: Learned;
  thresholds: Thresholds;
  cheap: Map<number, TaskView>;
  oracle: Map<number, TaskView>;
}

const finished = (reader: PlanReader, stage: string): boolean => {
  const s = reader.stage(stage);
  return s !== undefined && s.completed >= s.total;
};

/** The thresholds learned from the finished cascade and sample stages; null until both are done. */
export function learnedFrom(parts: TargetParts, target: CascadeTarget, reader: PlanReader, cascadeStage: string): LearnedState | null {
  if (!finished(reader, cascadeStage) || !finished(reader, SAMPLE_STAGE)) return null;
  const cheap = new Map(reader.done(cascadeStage).map((t) => [t.index, t]));
  const oracle = new Map(reader.done(SAMPLE_STAGE).map((t) => [t.index, t]));
  const points: SamplePoint[] = [];
  for (const o of oracle.values()) {
    if (!o.success) continue; // no oracle answer: the item goes on to the job's model, and is not in the statistics
    const c = cheap.get(o.index);
    points.push(parts.point(c?.success ? c.output : null, o.output));
  }
  const others: (number | null)[] = [];
  for (const c of cheap.values()) if (!oracle.has(c.index)) others.push(parts.score(c.success ? c.output : null));
  const learned = learnThresholds(target, points, others);
  return { learned, thresholds: { acceptAbove: learned.acceptAbove, rejectBelow: learned.rejectBelow }, cheap, oracle };
}

/** What the job's output says of a learned cascade. */
export function cascadeOutput(state: LearnedState, target: CascadeTarget, itemsByModel: number) {
  const { learned } = state;
  return {
    accept_above: learned.acceptAbove,
    reject_below: learned.rejectBelow,
    sample_size: learned.sampleSize,
    oracle_calls: state.oracle.size + itemsByModel,
    met: learned.met,
    estimate: learned.estimate,
    seed: target.seed,
  };
}
