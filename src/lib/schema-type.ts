/**
 * A JSON Schema's type in a few words — a `$ref` by the name it points to, an enum by its values,
 * a union's options joined by `|`, a list as `T[]` — for the API references (the `/docs` page,
 * docs/http-api.md), each of which marks names and values up its own way.
 */
export interface TypeMarks {
  /** A `$ref`'s schema name. */
  ref(name: string): string;
  /** An enum value. */
  value(value: unknown): string;
  /** A type's plain words. */
  text(text: string): string;
  /** Enum values shown before "…" (all by default). */
  maxValues?: number;
}

export function schemaType(schema: unknown, marks: TypeMarks, depth = 0): string {
  if (!schema || typeof schema !== "object" || depth > 8) return marks.text("any");
  const s = schema as Record<string, unknown>;
  if (typeof s.$ref === "string") return marks.ref(s.$ref.split("/").at(-1) as string);
  if (Array.isArray(s.enum)) {
    const shown = s.enum
      .slice(0, marks.maxValues ?? s.enum.length)
      .map((v) => marks.value(v))
      .join(" | ");
    return s.enum.length > (marks.maxValues ?? Infinity) ? `${shown} | …` : shown;
  }
  const union = s.anyOf ?? s.oneOf;
  if (Array.isArray(union)) return union.map((u) => schemaType(u, marks, depth + 1)).join(" | ");
  if (s.type === "array") return `${schemaType(s.items, marks, depth + 1)}[]`;
  if (Array.isArray(s.type)) return marks.text(s.type.join(" | "));
  return marks.text(typeof s.type === "string" ? s.type : "any");
}
