/**
 * Runs `fn` as a microtask, in the order `queueMicrotask` would, without what that costs in
 * workerd: the runtime wraps every callback it is given in a new API function (~0.006 ms per item
 * on S2: BENCHMARKS.md, "One timer, rows kept, microtasks"), where a resolved promise's reaction
 * is V8's own. A throw is an unhandled rejection, reported as `queueMicrotask`'s uncaught error is.
 */
export function microtask(fn: () => void): void {
  void Promise.resolve().then(fn);
}
