/**
 * The shuffle of a map-reduce job (no model call), pure and deterministic:
 * 1. every extraction is tagged with its mapper batch's document indices (`sources`);
 * 2. extractions are grouped by `key` (a field name or dotted path; missing or not a string →
 *    the group "default");
 * 3. `exact` dedupe within a group: two extractions are duplicates when their canonical JSON is
 *    equal, or, with `dedupeFields`, when those fields are equal after trimming and case-folding
 *    strings. Duplicates merge into one extraction whose `sources` are the union; where they
 *    differ outside the dedupe fields, `conflict` picks the kept one: `first` (lowest source
 *    index), `most_frequent` (the variant seen most often; ties → first) or
 *    `highest_confidence` (the largest numeric `confidence`; ties → first);
 * 4. groups are ordered by key (code-point order), extractions within a group by (first source
 *    index, position in its mapper's output).
 * The same mapper outputs give the same groups, whatever order the mappers finished in.
 */
import { canonicalJson } from "../../lib/canonical-json";

export type Extraction = Record<string, unknown>;
export type Tagged = Extraction & { sources: number[] };

export interface MapperOutput {
  documents: number[]; // the batch's document indices, ascending
  extractions: Extraction[];
}

export interface ShuffleOptions {
  key: string;
  dedupe: "exact" | "none";
  dedupeFields: string[] | null;
  conflict: "first" | "most_frequent" | "highest_confidence";
}

export interface Group {
  key: string;
  extractions: Tagged[];
}

export interface Shuffled {
  groups: Group[];
  extractions: number; // before dedupe
  merged: number; // duplicates folded away
  /** dedupe_fields that no extraction has: a typo there would merge distinct extractions, so it is reported. */
  missingDedupeFields: string[];
}

export const DEFAULT_GROUP = "default";

/** The value at a dotted path (`a.b.c`) among the value's own fields (never its prototype's), or undefined. */
export function pathValue(value: unknown, path: string): unknown {
  let current = value;
  for (const part of path.split(".")) {
    if (typeof current !== "object" || current === null || Array.isArray(current) || !Object.hasOwn(current, part)) return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

const codePointOrder = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

interface Occurrence {
  extraction: Extraction;
  sources: number[];
  order: [number, number]; // (first source index, position in its mapper's output)
}

const before = (a: Occurrence, b: Occurrence): boolean => a.order[0] < b.order[0] || (a.order[0] === b.order[0] && a.order[1] < b.order[1]);

function fold(value: unknown): unknown {
  return typeof value === "string" ? value.trim().toLowerCase() : value;
}

function identity(extraction: Extraction, fields: string[] | null): string {
  if (!fields) return canonicalJson(extraction);
  return canonicalJson(fields.map((f) => fold(pathValue(extraction, f)) ?? null));
}

function confidence(e: Extraction): number {
  const c = e.confidence;
  return typeof c === "number" && Number.isFinite(c) ? c : -Infinity;
}

/** The kept variant of a set of duplicates (sorted by occurrence order). */
function pick(dups: Occurrence[], conflict: ShuffleOptions["conflict"]): Occurrence {
  const first = dups[0] as Occurrence;
  if (conflict === "first") return first;
  if (conflict === "highest_confidence") {
    return dups.reduce((best, d) => (confidence(d.extraction) > confidence(best.extraction) ? d : best), first);
  }
  const counts = new Map<string, { n: number; at: Occurrence }>();
  for (const d of dups) {
    const variant = canonicalJson(d.extraction);
    const entry = counts.get(variant);
    if (entry) entry.n++;
    else counts.set(variant, { n: 1, at: d });
  }
  let best = { n: 0, at: first };
  for (const entry of counts.values()) if (entry.n > best.n) best = entry; // insertion order: ties keep the first
  return best.at;
}

function dedupe(occurrences: Occurrence[], o: ShuffleOptions): { kept: Occurrence[]; merged: number } {
  if (o.dedupe === "none") return { kept: occurrences, merged: 0 };
  const byIdentity = new Map<string, Occurrence[]>();
  for (const occ of occurrences) {
    const id = identity(occ.extraction, o.dedupeFields);
    const list = byIdentity.get(id);
    if (list) list.push(occ);
    else byIdentity.set(id, [occ]);
  }
  const kept: Occurrence[] = [];
  for (const dups of byIdentity.values()) {
    const chosen = pick(dups, o.conflict);
    const sources = [...new Set(dups.flatMap((d) => d.sources))].sort((a, b) => a - b);
    kept.push({ extraction: chosen.extraction, sources, order: (dups[0] as Occurrence).order });
  }
  return { kept, merged: occurrences.length - kept.length };
}

export function shuffle(outputs: MapperOutput[], o: ShuffleOptions): Shuffled {
  const byKey = new Map<string, Occurrence[]>();
  let total = 0;
  for (const output of outputs) {
    const sources = [...output.documents].sort((a, b) => a - b);
    output.extractions.forEach((extraction, position) => {
      total++;
      const value = pathValue(extraction, o.key);
      const key = typeof value === "string" ? value : DEFAULT_GROUP;
      const occ: Occurrence = { extraction, sources, order: [sources[0] ?? 0, position] };
      const list = byKey.get(key);
      if (list) list.push(occ);
      else byKey.set(key, [occ]);
    });
  }
  let merged = 0;
  const groups = [...byKey.keys()].sort(codePointOrder).map((key) => {
    const occurrences = (byKey.get(key) as Occurrence[]).sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0));
    const result = dedupe(occurrences, o);
    merged += result.merged;
    const extractions = result.kept.sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0)).map((k) => ({ ...k.extraction, sources: k.sources }));
    return { key, extractions };
  });
  const seen = (field: string) => outputs.some((output) => output.extractions.some((e) => pathValue(e, field) !== undefined));
  const missingDedupeFields = o.dedupe === "exact" && total > 0 ? (o.dedupeFields ?? []).filter((field) => !seen(field)) : [];
  return { groups, extractions: total, merged, missingDedupeFields };
}
