/** A JSON object (not null, not an array): what a parsed body's nested objects are checked with. */
export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
