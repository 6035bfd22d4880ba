/** A classification's labels as a set: what a cascade's two answers, or a result and its gold label, are compared by. */

/** The label, or the set of labels (sorted, once each), an answer or a gold label gives: a label, a list of them, `{label}` or `{labels}`; null when none. */
export function labelsOf(value: unknown): string[] | null {
  if (typeof value === "string") return [value];
  if (Array.isArray(value) && value.every((v) => typeof v === "string")) return [...new Set(value as string[])].sort();
  const o = value as { label?: unknown; labels?: unknown } | null;
  if (typeof o?.label === "string") return [o.label];
  if (Array.isArray(o?.labels)) return labelsOf(o.labels);
  return null;
}

/** Whether two answers give the same label (or set); false when either gives none. */
export function sameLabels(a: unknown, b: unknown): boolean {
  const x = labelsOf(a);
  const y = labelsOf(b);
  return x !== null && y !== null && x.length === y.length && x.every((label, i) => label === y[i]);
}
