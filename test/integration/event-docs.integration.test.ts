/**
 * docs/events-and-webhooks.md against the event schemas: the coordinator's emits are typed by
 * EVENT_DATA (durable-objects/coordinator/job-log.ts), the OpenAPI document and the client's event
 * types come from the same schemas, and this keeps the hand-written table saying the same.
 */
import { describe, expect, it } from "vitest";
import doc from "../../docs/events-and-webhooks.md?raw";
import { EVENT_DATA } from "../../src/schemas/events";

describe("the event table of the docs", () => {
  it("names every event, each with the fields of its schema", () => {
    const rows = new Map([...doc.matchAll(/^\| `([A-Z_]+)` \| [^|]+ \| (.+) \|$/gm)].map((m) => [m[1] as string, m[2] as string]));
    expect([...rows.keys()].sort()).toEqual(Object.keys(EVENT_DATA).sort());
    for (const [name, schema] of Object.entries(EVENT_DATA)) {
      const row = rows.get(name) as string;
      // The row's first `{…}`: the fields every such event has (`…` marks more, named after it).
      const listed = (/`\{([^}]*)\}`/.exec(row)?.[1] ?? "")
        .split(",")
        .map((f) => f.split(":")[0]?.trim() ?? "")
        .filter((f) => f && f !== "…");
      const fields = Object.keys(schema.shape);
      for (const field of listed) expect(fields, `${name}: ${field}`).toContain(field);
      const required = Object.entries(schema.shape).filter(([, f]) => !(f as { safeParse(v: unknown): { success: boolean } }).safeParse(undefined).success);
      for (const [field] of required) expect(row, `${name}: ${field}`).toContain(field);
    }
  });
});
