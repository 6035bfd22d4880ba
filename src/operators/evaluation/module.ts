/** Evaluations: how good a job's answers are — a judge over a sample, gold labels, or A/B between two jobs (POST /v1/evaluations). */
import { defineOperator } from "../define";
import { evaluationOperator } from "./plan";
import { EvaluationRequestSchema } from "./schema";
import { submitEvaluationJob } from "./submit";

export const evaluationModule = defineOperator({
  type: "evaluation",
  route: {
    path: "/evaluations",
    operationId: "createEvaluation",
    otherErrors: { 404: "No such job to evaluate (or to compare with), or not this tenant's", 409: "The job to evaluate (or to compare with) has not ended" },
    summary:
      "Measure a finished job's answers: a judge over a seeded sample (pass rates per criterion), gold labels (accuracy; precision, recall and F1 for filter and classify), or A/B between two jobs with the same inputs (win rate) — every rate with its Wilson interval. A job of type `evaluation`; the evaluated job never changes",
  },
  schema: EvaluationRequestSchema,
  submit: submitEvaluationJob,
  operator: evaluationOperator,
  // `?failed=true|false`: the items the judge failed on some criterion, or passed on every one.
  views: { resultFlags: [{ name: "failed", path: "$.failed" }] },
});
