/** Runs `fn` once and says how long it took: the hostile tests' bound on work done before a refusal. */
export function timed<T>(fn: () => T): { value: T; ms: number } {
  const started = performance.now();
  const value = fn();
  return { value, ms: performance.now() - started };
}
