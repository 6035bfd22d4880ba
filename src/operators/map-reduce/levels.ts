/**
 * The shape of a map-reduce job's reduce stage, from the number of groups the shuffle made:
 * - flat: one call over everything (level 0);
 * - category: one call per group (level 0), in parallel;
 * - hierarchical: level 0 takes `fanIn` groups per call, each next level `fanIn` outputs of the
 *   level below per call, until a level has one call. There is always at least level 0.
 * Tasks are numbered level by level; `parentOf`/`childrenOf` walk the tree.
 */
export type Strategy = "hierarchical" | "flat" | "category";

export interface Levels {
  sizes: number[]; // calls per level
  offsets: number[]; // index of each level's first task
  total: number;
}

export function levels(strategy: Strategy, groups: number, fanIn: number): Levels {
  const sizes =
    strategy === "flat"
      ? [1]
      : strategy === "category"
        ? [groups]
        : (() => {
            const out = [Math.max(1, Math.ceil(groups / fanIn))];
            while ((out.at(-1) as number) > 1) out.push(Math.ceil((out.at(-1) as number) / fanIn));
            return out;
          })();
  const offsets = sizes.map((_, l) => sizes.slice(0, l).reduce((a, b) => a + b, 0));
  return { sizes, offsets, total: sizes.reduce((a, b) => a + b, 0) };
}

/** The level and position within it of task `index`. */
export function locate(l: Levels, index: number): { level: number; position: number } {
  for (let level = l.sizes.length - 1; level >= 0; level--) {
    if (index >= (l.offsets[level] as number)) return { level, position: index - (l.offsets[level] as number) };
  }
  return { level: 0, position: index };
}

/** The task of the level above that takes task `index` (null at the top). */
export function parentOf(l: Levels, index: number, fanIn: number): number | null {
  const { level, position } = locate(l, index);
  if (level + 1 >= l.sizes.length) return null;
  return (l.offsets[level + 1] as number) + Math.floor(position / fanIn);
}

/** The tasks of the level below that task `index` (level ≥ 1) takes, in order. */
export function childrenOf(l: Levels, index: number, fanIn: number): number[] {
  const { level, position } = locate(l, index);
  if (level === 0) return [];
  const below = l.offsets[level - 1] as number;
  const size = l.sizes[level - 1] as number;
  const first = position * fanIn;
  return Array.from({ length: Math.min(fanIn, size - first) }, (_, i) => below + first + i);
}

/** The task whose output is the stage's final value (flat and hierarchical: the top one). */
export function topIndex(l: Levels): number {
  return l.total - 1;
}
