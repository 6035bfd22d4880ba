/**
 * Locality-sensitive hashing of embeddings by random hyperplanes (SimHash): a vector's sign
 * against each of BANDS × rows hyperplanes, grouped into BANDS keys of `rows` bits. Two vectors at
 * cosine c agree on one bit with probability 1 − arccos(c)/π, on a band with that to the `rows`,
 * and share at least one band's key — become candidates — with 1 − (1 − p^rows)^BANDS: at 8 rows,
 * 0.98 at c = 0.85 and 0.47 at c = 0.5, so the rows are chosen from the threshold (`rowsFor`).
 *
 * The vectors are packed (../../lib/packed-vector.ts): int8 components, whose signs against the
 * hyperplanes are the float vector's but where a dot product is within rounding of zero. The
 * hyperplanes come from a fixed seed, so every invocation draws the same ones (made once per
 * isolate per shape).
 */
import { seeded } from "../../lib/seeded";

export const BANDS = 16;

/** Bits per band for a cosine threshold: fewer for a lower threshold, so its pairs still meet in a band. */
export function rowsFor(threshold: number): number {
  if (threshold >= 0.8) return 8;
  if (threshold >= 0.6) return 6;
  return 4;
}

const planes = new Map<string, Float32Array>(); // `${dims}x${rows}` → BANDS × rows hyperplanes of `dims`, row-major

/** Standard normal draws from a fixed-seed generator (../../lib/seeded.ts + Box–Muller). */
function hyperplanes(dims: number, rows: number): Float32Array {
  const key = `${dims}x${rows}`;
  const known = planes.get(key);
  if (known) return known;
  const uniform = seeded(0x5eed1e55);
  const out = new Float32Array(BANDS * rows * dims);
  for (let i = 0; i < out.length; i++) out[i] = Math.sqrt(-2 * Math.log(uniform() || 1e-12)) * Math.cos(2 * Math.PI * uniform());
  if (planes.size >= 8) planes.clear(); // a few shapes per isolate at most (dimensions × thresholds in use)
  planes.set(key, out);
  return out;
}

/** The vector's key in each band: `<band>:<bits>`. */
export function bandKeys(vector: ArrayLike<number>, rows: number): string[] {
  const dims = vector.length;
  const h = hyperplanes(dims, rows);
  const keys: string[] = [];
  for (let band = 0; band < BANDS; band++) {
    let bits = 0;
    for (let r = 0; r < rows; r++) {
      const base = (band * rows + r) * dims;
      let dot = 0;
      for (let d = 0; d < dims; d++) dot += (h[base + d] as number) * (vector[d] as number);
      bits = bits * 2 + (dot >= 0 ? 1 : 0);
    }
    keys.push(`${band}:${bits}`);
  }
  return keys;
}
