/** The dashboard's text of a job's models (assets/dash/job-text.js): the chain in order, what each answered, circuits and a pool's deployments that are not closed. */
import { describe, expect, it } from "vitest";
// @ts-expect-error: the dashboard's modules are plain JavaScript, checked by assets/tsconfig.json
import { modelsText } from "../../assets/dash/job-text.js";

describe("a job's models as the dashboard says them", () => {
  it("names the chain, each model's answers, an open circuit, and a pool's deployments that are down or probing", () => {
    const models = [
      {
        model: "openai/gpt-6-sol",
        circuit: "closed",
        answered: 1200,
        deployments: [
          { deployment: 1, circuit: "closed" },
          { deployment: 2, circuit: "open" },
          { deployment: 3, circuit: "half_open" },
        ],
      },
      { model: "anthropic/claude-sonnet-4-6", circuit: "closed", answered: 3 },
    ];
    expect(modelsText(models)).toBe("openai/gpt-6-sol: 1,200 answered [deployment 2 down, deployment 3 probing] → anthropic/claude-sonnet-4-6: 3 answered");
    expect(modelsText([{ model: "m", circuit: "open", answered: 0, deployments: [{ deployment: 1, circuit: "closed" }] }])).toBe(
      "m: 0 answered, down: its items skip it",
    );
  });
});
