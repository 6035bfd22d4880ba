/**
 * Size caps per request field, checked before anything is compiled, stored or started (413
 * `payload_too_large` with the field's path). They keep one job's spec well under the 2 MB a
 * Durable Object row or value may hold (a task carries the spec and one input), and keep the
 * work of a submission small. Sizes are UTF-8 bytes of a string, or of a value's JSON.
 */
import { ApiError, type FieldIssue } from "../lib/errors";

export const FIELD_CAPS: Readonly<Record<string, number>> = {
  prompt_template: 100_000,
  predicate_template: 100_000,
  comparison_template: 100_000,
  resolution_template: 100_000,
  criteria: 100_000,
  agent_prompt_template: 100_000,
  system_prompt: 100_000,
  output_schema: 64_000,
  retry_guidance: 8_000,
  continuation_message: 8_000,
  completion_marker: 1_000,
  metadata: 16_000,
  tools: 256_000,
  initial_value: 256_000, // like one input
};

const encoder = new TextEncoder();

export function byteSize(value: unknown): number {
  return encoder.encode(typeof value === "string" ? value : (JSON.stringify(value) ?? "")).byteLength;
}

/** The fields of `object` over their caps, each at `<prefix><field>`. */
export function capIssues(object: Record<string, unknown>, prefix = "", caps: Readonly<Record<string, number>> = FIELD_CAPS): FieldIssue[] {
  const issues: FieldIssue[] = [];
  for (const [field, max] of Object.entries(caps)) {
    const value = object[field];
    if (value === undefined || value === null) continue;
    const size = byteSize(value);
    if (size > max) issues.push({ path: `${prefix}${field}`, message: `${size} bytes; at most ${max}` });
  }
  return issues;
}

/** 413 `payload_too_large` naming every field over its cap. */
export function refuseOverCaps(issues: FieldIssue[]): void {
  if (issues.length > 0) {
    throw new ApiError(413, "payload_too_large", `A field is over its size cap: ${issues.map((i) => i.path).join(", ")}.`, { details: issues });
  }
}

/** `nested` names sub-objects (a reduce's tasks) whose fields have the same caps, reported as `<name>.<field>`. */
export function checkFieldCaps(body: Record<string, unknown>, caps: Readonly<Record<string, number>> = FIELD_CAPS, nested: string[] = []): void {
  const issues = capIssues(body, "", caps);
  for (const name of nested) {
    const value = body[name];
    if (typeof value === "object" && value !== null) issues.push(...capIssues(value as Record<string, unknown>, `${name}.`, caps));
  }
  refuseOverCaps(issues);
}
