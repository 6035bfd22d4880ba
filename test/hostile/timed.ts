/**
 * The hostile tests' bound on work done before a refusal, measured as this thread's CPU time: the
 * work a call did. Wall time also counts the time the thread waited for a core, which grows with
 * whatever else the machine runs (a second copy of the suite, a busy CI runner); CPU time does not.
 */
export function cpuMs(): number {
  const used = process.threadCpuUsage();
  return (used.user + used.system) / 1000;
}

/** Runs `fn` once and says how much CPU time it took. */
export function timed<T>(fn: () => T): { value: T; ms: number } {
  const started = cpuMs();
  const value = fn();
  return { value, ms: cpuMs() - started };
}
