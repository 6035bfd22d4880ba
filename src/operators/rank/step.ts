/** Rank as a pipeline step: its value is the top k (fewer when fewer items came), each entry with its `item`. */
import { defineStep } from "../operator-step";
import { rankOperator, type RankEntry } from "./plan";
import { RankRequestSchema } from "./schema";
import { rankSpec } from "./submit";

export const rankStep = defineStep({
  operator: rankOperator,
  schema: RankRequestSchema,
  spec: rankSpec,
  value: (_spec, output, items) => (output as RankEntry[]).map((entry) => ({ ...entry, item: items[entry.index] })),
});
