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

/**
 * How much slower than its CPU time the machine runs work right now: wall time over this thread's
 * CPU time for a short busy loop, at least 1 (about 1 on an idle core; about 2 with two busy
 * processes per core, as with a second suite beside this one). A bound on a server's latency is
 * scaled by it, so it holds the server to the same work whatever else the machine runs.
 */
export function contention(): number {
  const wall = performance.now();
  const cpu = cpuMs();
  let x = 0;
  while (cpuMs() - cpu < 50) x += Math.sqrt(x + 1); // ~50 ms of CPU
  const ratio = (performance.now() - wall) / (cpuMs() - cpu);
  return Math.max(1, ratio + x * 0); // x: keeps the loop from being optimized away
}
