/**
 * The audit trail of a map-reduce job, from its stored task results: every mapper, reducer and
 * synthesis call as a node with the documents behind it (`sources`) and the calls that fed it
 * (`inputs`), so any line of the final output can be traced back to documents.
 */
import type { StoredResult } from "../../db/jobs";

export interface AuditNode {
  id: string;
  stage: string;
  level: number | null;
  key: string | null;
  sources: number[];
  inputs: string[];
  usage: { input_tokens: number; output_tokens: number };
}

export interface Audit {
  documents: number;
  left_out: number[];
  nodes: AuditNode[];
}

type Row = StoredResult & {
  stage?: string;
  usage?: AuditNode["usage"];
  documents?: number[];
  level?: number;
  key?: string | null;
  sources?: number[];
  inputs?: number[];
};

const NO_USAGE = { input_tokens: 0, output_tokens: 0 };

export function buildAudit(results: Row[]): Audit {
  const maps = results.filter((r) => r.stage === "map");
  const reduces = results.filter((r) => r.stage === "reduce" && r.success);
  const shuffle = results.find((r) => r.stage === "shuffle");
  const failedDocs = maps.filter((m) => !m.success).flatMap((m) => m.documents ?? []);
  const leftOut = ((shuffle?.output as { left_out?: number[] } | undefined)?.left_out ?? failedDocs).slice().sort((a, b) => a - b);
  const nodes: AuditNode[] = maps.map((m) => ({
    id: `map:${m.index}`,
    stage: "map",
    level: null,
    key: null,
    sources: m.documents ?? [],
    inputs: [],
    usage: m.usage ?? NO_USAGE,
  }));
  for (const r of reduces) {
    const sources = r.sources ?? [];
    const fedBy =
      (r.level ?? 0) === 0
        ? maps.filter((m) => m.success && (m.documents ?? []).some((d) => sources.includes(d))).map((m) => `map:${m.index}`)
        : (r.inputs ?? []).map((i) => `reduce:${i}`);
    nodes.push({ id: `reduce:${r.index}`, stage: "reduce", level: r.level ?? 0, key: r.key ?? null, sources, inputs: fedBy, usage: r.usage ?? NO_USAGE });
  }
  for (const s of results.filter((r) => r.stage === "synthesis" && r.success)) {
    const top = reduces.filter((r) => r.level === Math.max(...reduces.map((x) => x.level ?? 0)));
    const sources = [...new Set(top.flatMap((r) => r.sources ?? []))].sort((a, b) => a - b);
    nodes.push({
      id: `synthesis:${s.index}`,
      stage: "synthesis",
      level: null,
      key: null,
      sources,
      inputs: top.map((r) => `reduce:${r.index}`),
      usage: s.usage ?? NO_USAGE,
    });
  }
  // Before the shuffle has run, the map results say how many documents there are (all batches are planned).
  const documents = (shuffle?.output as { documents?: number } | undefined)?.documents ?? maps.reduce((n, m) => n + (m.documents?.length ?? 0), 0);
  return { documents, left_out: leftOut, nodes };
}
