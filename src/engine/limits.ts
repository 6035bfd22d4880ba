/**
 * How wide a job may go, and the platform limit that shapes it: every call worker a coordinator
 * starts is a Durable Object request, and one invocation may make at most 1,000 subrequests
 * (Workers Paid; 50 on Free). A coordinator starts at most BEGINS_PER_INVOCATION workers per
 * invocation and continues in its next alarm, leaving room for its storage, D1 and queue calls.
 * After the start, workers take their next task in the answer to their report (no subrequest).
 */
export const MAX_MAP_CONCURRENCY = 1_000;
export const BEGINS_PER_INVOCATION = 400;

/** Lost attempts after which a task is quarantined: a poison item may restart the runtime at most twice. */
export const LOST_ATTEMPTS_MAX = 2;

/**
 * The most reduce calls a map-reduce job's shuffle may plan. The mappers' output decides how many
 * groups there are (a model answering 5,000 categories made a 40,001-call stage while the dry run
 * said 16); past this the job fails with `stage_too_large` before any reducer runs.
 */
export const MAX_REDUCE_CALLS = 1_000;

/** A job's end when a stage sized by model output would pass its cap (the contract's `stage_too_large`). */
export function stageTooLarge(
  stage: string,
  size: number,
  cap: number,
  what: string,
  step: string | null = null,
): { code: string; message: string; stage: string; index: null; step: string | null; details: { cap: number; size: number } } {
  return {
    code: "stage_too_large",
    message: `${what} would be ${size}; at most ${cap}. Nothing of the stage ran.`,
    stage,
    index: null,
    step,
    details: { cap, size },
  };
}

/** How long a call task may wait on a provider's rate limits (since its first rate-limit answer in a row) unless the job says `max_wait_secs`. */
export const DEFAULT_MAX_WAIT_SECS = 3600;
