/**
 * A job's trace as OTLP/HTTP JSON spans (contract v4, "Traces (OpenTelemetry)", the GenAI semantic
 * conventions): the root `invoke_workflow fanout.<type>`, a span per stage, a CLIENT span per model
 * call `chat <model>` (`embeddings <model>` for an embedding). Pure: ids, the `traceparent`
 * header, spans and their attributes; the coordinator's JobTracer (durable-objects/coordinator/tracer.ts)
 * collects and exports them.
 */
import type { JobSpecBase } from "./types";

export interface TraceIds {
  traceId: string; // 32 hex digits
  rootSpanId: string; // 16 hex digits
  /** The submitting request's span (its `traceparent`): the root's parent. */
  parentSpanId: string | null;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;
const ZEROS = /^0+$/;

const hex = (bytes: number): string => Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, "0")).join("");

/** A job's trace: the submitting request's (a valid `traceparent`), else a new one. */
export function newTrace(traceparent: string | null): TraceIds {
  const m = traceparent ? TRACEPARENT.exec(traceparent.trim().toLowerCase()) : null;
  const parent = m && !ZEROS.test(m[1] as string) && !ZEROS.test(m[2] as string) ? { traceId: m[1] as string, parentSpanId: m[2] as string } : null;
  return { traceId: parent?.traceId ?? hex(16), rootSpanId: hex(8), parentSpanId: parent?.parentSpanId ?? null };
}

/** A stage's span id: the same for the trace and stage after any restart (FNV-1a, 64 bits as two halves). */
export function stageSpanId(trace: TraceIds, stage: string): string {
  const half = (seed: number) => {
    let h = seed;
    for (const ch of `${trace.traceId}/${stage}`) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0;
    return h.toString(16).padStart(8, "0");
  };
  return half(0x811c9dc5) + half(0x01000193);
}

export type AttributeValue = string | number | boolean | string[];

export interface OtlpAttribute {
  key: string;
  value:
    { stringValue: string } | { intValue: string } | { doubleValue: number } | { boolValue: boolean } | { arrayValue: { values: { stringValue: string }[] } };
}

export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number; // 1 internal, 3 client
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: OtlpAttribute[];
  status: { code: number; message?: string }; // 1 ok, 2 error
}

export const SPAN_KIND = { internal: 1, client: 3 } as const;

/** Attributes as OTLP writes them; an undefined or null value is left out. */
export function attributes(values: Record<string, AttributeValue | null | undefined>): OtlpAttribute[] {
  const out: OtlpAttribute[] = [];
  for (const [key, v] of Object.entries(values)) {
    if (v === null || v === undefined) continue;
    if (Array.isArray(v)) out.push({ key, value: { arrayValue: { values: v.map((s) => ({ stringValue: s })) } } });
    else if (typeof v === "string") out.push({ key, value: { stringValue: v } });
    else if (typeof v === "boolean") out.push({ key, value: { boolValue: v } });
    else out.push({ key, value: Number.isInteger(v) ? { intValue: String(v) } : { doubleValue: v } });
  }
  return out;
}

const nanos = (ms: number): string => `${Math.round(ms)}000000`;

export function span(parts: {
  trace: TraceIds;
  spanId: string;
  parentSpanId: string | null;
  name: string;
  kind: number;
  startMs: number;
  endMs: number;
  attributes: OtlpAttribute[];
  error?: string | null;
}): OtlpSpan {
  const out: OtlpSpan = {
    traceId: parts.trace.traceId,
    spanId: parts.spanId,
    name: parts.name,
    kind: parts.kind,
    startTimeUnixNano: nanos(parts.startMs),
    endTimeUnixNano: nanos(Math.max(parts.startMs, parts.endMs)),
    attributes: parts.attributes,
    status: parts.error ? { code: 2, message: parts.error.slice(0, 500) } : { code: 1 },
  };
  if (parts.parentSpanId) out.parentSpanId = parts.parentSpanId;
  return out;
}

/** The root span's name and attributes. */
export function rootAttributes(spec: JobSpecBase): { name: string; attributes: OtlpAttribute[] } {
  return {
    name: `invoke_workflow fanout.${spec.type}`,
    attributes: attributes({ "gen_ai.operation.name": "invoke_workflow", "fanout.job.id": spec.jobId, "fanout.job.type": spec.type }),
  };
}

/** One OTLP/HTTP JSON export of spans. */
export function exportBody(spans: OtlpSpan[]): string {
  const resource = { attributes: attributes({ "service.name": "fanout" }) };
  return JSON.stringify({ resourceSpans: [{ resource, scopeSpans: [{ scope: { name: "fanout" }, spans }] }] });
}

/** A new span id. */
export const newSpanId = (): string => hex(8);
