/**
 * Locality-sensitive hashing of embeddings by random hyperplanes (SimHash): a vector's sign
 * against each of BANDS × rows hyperplanes, grouped into BANDS keys of `rows` bits. Two vectors at
 * cosine c agree on one bit with probability 1 − arccos(c)/π, on a band with that to the `rows`,
 * and share at least one band's key — become candidates — with 1 − (1 − p^rows)^BANDS: at 8 rows,
 * 0.98 at c = 0.85 and 0.47 at c = 0.5, so the rows are chosen from the threshold (`rowsFor`).
 *
 * Vectors are kept as int8 per component (scaled by the largest), base64: 1 byte a dimension, and
 * a cosine computed from them is within ~0.005 of the exact one. The hyperplanes come from a fixed
 * seed, so every invocation draws the same ones (made once per isolate per shape).
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
export function bandKeys(vector: readonly number[], rows: number): string[] {
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

/** The vector as int8 components scaled by its largest, base64. */
export function quantize(vector: readonly number[]): string {
  let largest = 0;
  for (const x of vector) largest = Math.max(largest, Math.abs(x));
  const bytes = new Uint8Array(vector.length);
  for (let i = 0; i < vector.length; i++) bytes[i] = (largest === 0 ? 0 : Math.round(((vector[i] as number) / largest) * 127)) & 0xff;
  let text = "";
  for (let i = 0; i < bytes.length; i += 4096) text += String.fromCharCode(...bytes.subarray(i, i + 4096));
  return btoa(text);
}

export function dequantize(text: string): Int8Array {
  const raw = atob(text);
  const out = new Int8Array(raw.length);
  for (let i = 0; i < raw.length; i++) out[i] = (raw.charCodeAt(i) << 24) >> 24;
  return out;
}

/** The cosine of two quantized vectors (0 when their lengths differ or one is zero). */
export function cosine(a: Int8Array, b: Int8Array): number {
  if (a.length !== b.length) return 0;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as number;
    const y = b[i] as number;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}
