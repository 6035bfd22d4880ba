/** Peak resident memory of a process and all its descendants, sampled from /proc (Linux). */
import { readdirSync, readFileSync } from "node:fs";

function children(): Map<number, number[]> {
  const byParent = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const list = byParent.get(ppid) ?? [];
      list.push(Number(entry));
      byParent.set(ppid, list);
    } catch {
      // the process ended while we looked
    }
  }
  return byParent;
}

function rssKb(pid: number): number {
  try {
    const match = readFileSync(`/proc/${pid}/status`, "utf8").match(/VmRSS:\s+(\d+) kB/);
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

export function treeRssMb(root: number): number {
  const tree = children();
  let total = 0;
  const stack = [root];
  while (stack.length > 0) {
    const pid = stack.pop() as number;
    total += rssKb(pid);
    stack.push(...(tree.get(pid) ?? []));
  }
  return total / 1024;
}

/** Samples every `everyMs` until stopped; returns the peak in MB. */
export function samplePeak(root: () => number | undefined, everyMs = 250): { stop(): number } {
  let peak = 0;
  const timer = setInterval(() => {
    const pid = root();
    if (pid !== undefined) peak = Math.max(peak, treeRssMb(pid));
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      return peak;
    },
  };
}

const CLOCK_TICKS = 100; // USER_HZ on Linux

/**
 * CPU seconds (user + system) used so far by a process and its descendants, by name: each live
 * process's own and its reaped children's (a child that ended during a run would otherwise take
 * its CPU out of the sum with it).
 */
export function treeCpu(root: number): Map<string, number> {
  const tree = children();
  const byName = new Map<string, number>();
  const stack = [root];
  while (stack.length > 0) {
    const pid = stack.pop() as number;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const secs = (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / CLOCK_TICKS;
      byName.set(name, (byName.get(name) ?? 0) + secs);
    } catch {
      // ended
    }
    stack.push(...(tree.get(pid) ?? []));
  }
  return byName;
}

/** The CPU seconds a process tree has used, all its processes together. */
export function treeCpuTotal(root: number): number {
  return [...treeCpu(root).values()].reduce((a, b) => a + b, 0);
}
