/** The worker pool's policy: first-fit blocks that never overlap, and the names of a job's workers. */
import { describe, expect, it } from "vitest";
import { firstFit, workerName } from "../../src/engine/worker-blocks";

describe("worker blocks", () => {
  it("fits a block at the lowest start that overlaps no block taken", () => {
    expect(firstFit([], 5)).toBe(0);
    expect(firstFit([{ start: 0, count: 4 }], 3)).toBe(4);
    expect(
      firstFit(
        [
          { start: 4, count: 3 },
          { start: 0, count: 2 },
        ],
        2,
      ),
    ).toBe(2); // the gap 2..3 fits 2
    expect(
      firstFit(
        [
          { start: 4, count: 3 },
          { start: 0, count: 2 },
        ],
        3,
      ),
    ).toBe(7); // but not 3
    expect(firstFit([{ start: 10, count: 5 }], 10)).toBe(0); // a gap before the first block
    expect(firstFit([{ start: 10, count: 5 }], 11)).toBe(15);
  });

  it("names a job's slot in its tenant's block, or after the job when it has none", () => {
    const job = { jobId: "job_1", tenantId: "ten_1" };
    expect(workerName(job, { start: 8, count: 4 }, 3)).toBe("ten_1:w11");
    expect(workerName(job, null, 3)).toBe("job_1:3");
  });
});
