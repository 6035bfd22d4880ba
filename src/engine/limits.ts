/**
 * How wide a job may go, and the platform limit that shapes it: every call worker a coordinator
 * starts is a Durable Object request, and one invocation may make at most 1,000 subrequests
 * (Workers Paid; 50 on Free). A coordinator starts at most BEGINS_PER_INVOCATION workers per
 * invocation and continues in its next alarm, leaving room for its storage, D1 and queue calls.
 * After the start, workers take their next task in the answer to their report (no subrequest).
 */
export const MAX_MAP_CONCURRENCY = 1_000;
export const BEGINS_PER_INVOCATION = 400;
