/** A JSON object (not null, not an array): what a parsed body's nested objects are checked with. */
export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Names that walk an object's prototype in JavaScript: never an id, an input name or a path into user data (the contract's v3 rule). */
export const PROTOTYPE_NAMES: ReadonlySet<string> = new Set(["__proto__", "constructor", "prototype"]);
