/** Request schema of POST /v1/map-reduce, built from the shared base fields. */
import { z } from "@hono/zod-openapi";
import { budgetUsdField } from "../budget-schema";
import { CacheSchema, callOverrideFields, maxWaitField, promptCacheField, sharedJobFields } from "../base-fields";
import { rateLimitField } from "../../schemas/pacing";
import { DEFAULT_RETRY_GUIDANCE } from "../base-fields";
import { PROTOTYPE_NAMES } from "../../lib/records";
import { executionField } from "../execution-field";

/** A field name or dotted path in an extraction: no part of it walks a prototype (`__proto__`, `constructor`, `prototype`). */
const FieldPath = z
  .string()
  .min(1)
  .max(200)
  .refine((path) => !path.split(".").some((part) => PROTOTYPE_NAMES.has(part)), { message: "a field path never names __proto__, constructor or prototype" });

export const MAX_DOCUMENTS = 10_000;
export const DEFAULT_ALLOCATION = { map: 0.6, shuffle: 0.05, reduce: 0.25, synthesis: 0.1 };
const ALLOCATION_TOLERANCE = 0.001; // the contract: shares must sum to 1 ± 0.001

const TaskSchema = (description: string) => z.strictObject({ prompt_template: z.string().min(1), ...callOverrideFields }).openapi({ description });

const AllocationSchema = z
  .strictObject({ map: z.number().min(0).max(1), shuffle: z.number().min(0).max(1), reduce: z.number().min(0).max(1), synthesis: z.number().min(0).max(1) })
  .refine((a) => Math.abs(a.map + a.shuffle + a.reduce + a.synthesis - 1) <= ALLOCATION_TOLERANCE, "the shares must sum to 1 (± 0.001)");

export const MapReduceRequestSchema = z
  .strictObject({
    inputs: z.array(z.unknown()).min(1, "inputs must hold at least one document").max(MAX_DOCUMENTS).openapi({ description: "The documents" }),
    mapper: TaskSchema(
      "Runs per batch; its template must use `items` (also sees `indices`; `item` when docs_per_mapper is 1) and output a list of extraction objects, or an object whose `extractions` is one",
    ),
    docs_per_mapper: z.number().int().min(1).max(100).default(10),
    max_parallel_mappers: z.number().int().min(1).max(128).default(50).openapi({ description: "The job's cap on calls in flight, in every stage" }),
    shuffle: z
      .strictObject({
        key: FieldPath.default("category").openapi({ description: "A field name or dotted path" }),
        dedupe: z.enum(["exact", "none"]).default("exact"),
        dedupe_fields: z.array(FieldPath).min(1).max(50).nullish().openapi({
          description:
            "Fields (or dotted paths) that make two extractions the same; checked against the mapper's output_schema when it names its fields, and a field no extraction has is listed in the shuffle's `missing_dedupe_fields`",
        }),
        conflict: z.enum(["first", "most_frequent", "highest_confidence"]).default("first"),
      })
      .default({ key: "category", dedupe: "exact", conflict: "first" }),
    reducer: TaskSchema("Its template must use `items` (also sees `key`, `level`, `groups`, `total_documents`)"),
    reduction_strategy: z.enum(["hierarchical", "flat", "category"]).default("hierarchical"),
    fan_in: z.number().int().min(2).max(50).default(5),
    synthesis: TaskSchema("One call over the reduce stage's final outputs; its template must use `results`").nullish(),
    map_failures: z.enum(["fail", "continue"]).default("fail"),
    ...sharedJobFields,
    ...executionField,
    ...maxWaitField,
    ...rateLimitField,
    temperature: z.number().min(0).max(2).nullish().default(0),
    retry_guidance: z.string().min(1).default(DEFAULT_RETRY_GUIDANCE),
    cache: CacheSchema.nullish(),
    ...promptCacheField,
    token_budget: z
      .strictObject({
        total: z.number().int().positive().max(1e12).optional(),
        ...budgetUsdField,
        on_exhausted: z.enum(["pause", "fail"]).default("pause"),
        allocation: AllocationSchema.optional().openapi({ description: "Shares of `total` per stage (needs `total`)" }),
      })
      .refine((b) => b.total !== undefined || b.usd !== undefined, "token_budget needs `total` (tokens), `usd` (dollars) or both")
      .refine((b) => b.allocation === undefined || b.total !== undefined, { message: "an allocation divides `total`: set it", path: ["allocation"] })
      .nullish(),
  })
  .openapi("MapReduceRequest");

export type MapReduceRequest = z.infer<typeof MapReduceRequestSchema>;
