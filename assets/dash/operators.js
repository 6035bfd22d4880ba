// @ts-check
/**
 * The New-job form's operators: map has fields of its own (./new.js); every other operator is its
 * request's own fields as JSON, started from a small example that runs as it is (the README's),
 * with the form's inputs, model, name, concurrency, retries and execution mode added. The API's
 * checks answer for every field.
 */

/** @type {Record<string, { route: string, label: string, fields: Record<string, unknown> | null, inputs?: unknown }>} */
export const OPERATORS = {
  map: { route: "/v1/map", label: "map: one call per item", fields: null },
  filter: {
    route: "/v1/filter",
    label: "filter: keep the items that meet a condition",
    fields: { predicate_template: "Is this about machine learning? {{ item }}" },
  },
  classify: {
    route: "/v1/classify",
    label: "classify: label each item",
    fields: { categories: [{ name: "complaint", description: "the customer is unhappy" }, { name: "question" }, { name: "praise" }] },
  },
  rank: { route: "/v1/rank", label: "rank: the top k by your criteria", fields: { criteria: "Most relevant to long-context modelling", k: 3 } },
  resolve: {
    route: "/v1/resolve",
    label: "resolve: cluster the records of one entity",
    fields: { comparison_template: "Same company? {{ item_a.name }} / {{ item_b.name }}", blocking: { keys: ["name"], method: "prefix" } },
  },
  join: {
    route: "/v1/join",
    label: "join: the form's inputs (left) with a list (right), by meaning",
    fields: {
      right: [{ name: "International Business Machines" }, { name: "Globex" }],
      predicate_template: "Same company? {{ left.name }} / {{ right.name }}",
      blocking: { method: "embedding", model: "openai/text-embedding-3-small", keys: ["name"], top_k: 5 },
    },
  },
  embed: { route: "/v1/embed", label: "embed: an embedding per item", fields: { model: "openai/text-embedding-3-small", template: "{{ item }}" } },
  reduce: {
    route: "/v1/reduce",
    label: "reduce: an ordered fold",
    fields: {
      initial_value: { facts: [] },
      reduction_task: {
        prompt_template: "Facts so far: {{ accumulator | tojson }}\nAdd: {{ current_result | tojson }}",
        output_schema: { type: "object", properties: { facts: { type: "array" } }, required: ["facts"] },
      },
    },
  },
  "map-reduce": {
    route: "/v1/map-reduce",
    label: "map-reduce: a corpus to a report",
    fields: {
      docs_per_mapper: 2,
      mapper: {
        prompt_template: "Extract claims:\n{% for d in items %}- {{ d }}\n{% endfor %}",
        output_schema: {
          type: "object",
          required: ["extractions"],
          properties: { extractions: { type: "array", items: { type: "object", required: ["claim"], properties: { claim: { type: "string" } } } } },
        },
      },
      reducer: { prompt_template: "Summarise: {{ items | tojson }}" },
      synthesis: { prompt_template: "Write the report from: {{ results }}" },
    },
  },
  "agentic-map": {
    route: "/v1/agentic-map",
    label: "agentic-map: an agent per item",
    fields: { agent_prompt_template: "Research {{ item }} and summarise it. Say DONE when finished.", max_turns: 6, completion_marker: "DONE", tools: [] },
  },
  pipelines: {
    route: "/v1/pipelines",
    label: "pipelines: steps over a shared store",
    fields: { steps: [{ id: "answers", type: "llm", batch: { items: "${inputs}", as: "q" }, prompt_template: "Answer briefly: {{ q }}" }] },
  },
};

/** The operators whose request takes no `concurrency` (map-reduce sizes its stages itself). */
const NO_CONCURRENCY = new Set(["map-reduce"]);

/** The request of an operator other than map: its fields (the JSON the user edited) with the form's common ones. */
export function operatorBody(name, fields, common) {
  const { inputs, concurrency, ...rest } = common;
  // A pipeline's inputs are its store: the form's list is the store's `inputs`; a join's, its left list.
  const list = name === "pipelines" ? { inputs: { inputs } } : name === "join" ? { left: inputs } : { inputs };
  return { ...rest, ...(NO_CONCURRENCY.has(name) ? {} : { concurrency }), ...list, ...fields };
}
