/**
 * The W3C `traceparent` of the request that submits a job (contract v4, "Traces"): its trace becomes
 * the job's and its span the parent of the job's root span. Carried from the route to the
 * submission (src/jobs/submit.ts) as the request's context, not through every operator's signature.
 */
import { AsyncLocalStorage } from "node:async_hooks";

const context = new AsyncLocalStorage<string | null>();

/** Runs a submission with the request's `traceparent` header (absent: null). */
export function withTraceparent<T>(traceparent: string | null | undefined, run: () => Promise<T>): Promise<T> {
  return context.run(traceparent ?? null, run);
}

export const currentTraceparent = (): string | null => context.getStore() ?? null;
