/**
 * A provider's JSONL file read line by line as it streams in, never whole: a line longer than
 * `lineMax` is skipped (its result counts as missing), and reading stops once `left` characters
 * have been read (`cut`), so a 150 MB output file costs a Durable Object no more than the bound.
 */
export interface ReadBudget {
  left: number;
  lineMax: number;
  cut: boolean;
}

export async function* streamLines(response: Response, budget: ReadBudget): AsyncGenerator<string> {
  const reader = response.body?.getReader();
  if (!reader) return;
  const decoder = new TextDecoder();
  let pending = "";
  let skipping = false; // inside a line past lineMax: dropped up to its end
  try {
    for (;;) {
      const { done, value } = await reader.read();
      const text = done ? decoder.decode() : decoder.decode(value, { stream: true });
      budget.left -= text.length;
      let start = 0;
      for (let end = text.indexOf("\n"); end !== -1; end = text.indexOf("\n", start)) {
        const line = skipping ? null : pending + text.slice(start, end);
        start = end + 1;
        pending = "";
        skipping = false;
        if (line !== null && line.length <= budget.lineMax) yield line;
      }
      if (!skipping) pending += text.slice(start);
      if (pending.length > budget.lineMax) {
        pending = "";
        skipping = true;
      }
      if (done) {
        if (!skipping && pending) yield pending;
        return;
      }
      if (budget.left < 0) {
        budget.cut = true;
        return;
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
