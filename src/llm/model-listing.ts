/** A provider's `GET /v1/models` answer, read into the models it dates (./listed-shutdowns.ts reads and keeps it). */
const MAX_DATED = 2_000; // dated models kept of one answer
const MAX_MODEL_CHARS = 200;

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** The dated models of a `GET /v1/models` answer (`{"data": [{"id", "shutdown_date"}]}`), or null when it is not one. */
export function parseListing(text: string): Map<string, string> | null {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return null;
  }
  const data = (body as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) return null;
  const dated = new Map<string, string>();
  for (const entry of data) {
    if (dated.size >= MAX_DATED) break;
    const { id, shutdown_date: date } = (entry ?? {}) as { id?: unknown; shutdown_date?: unknown };
    if (typeof id !== "string" || id.length === 0 || id.length > MAX_MODEL_CHARS) continue;
    if (typeof date === "string" && DATE.test(date) && !Number.isNaN(Date.parse(`${date}T00:00:00Z`))) dated.set(id, date);
  }
  return dated;
}
