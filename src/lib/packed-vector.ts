/**
 * A vector kept small: int8 components scaled by the largest, as base64 — one byte a dimension
 * (2 KB for 1,536) where its JSON takes ~30 KB. A cosine computed from two packed vectors is within
 * ~0.005 of the exact one (what embedding blocking compares: ../operators/embedding-blocking).
 */
import { fromBase64, toBase64 } from "./base64";

export function packVector(vector: ArrayLike<number>): string {
  let largest = 0;
  for (let i = 0; i < vector.length; i++) largest = Math.max(largest, Math.abs(vector[i] as number));
  const bytes = new Uint8Array(vector.length);
  for (let i = 0; i < vector.length; i++) bytes[i] = (largest === 0 ? 0 : Math.round(((vector[i] as number) / largest) * 127)) & 0xff;
  return toBase64(bytes);
}

export function unpackVector(text: string): Int8Array {
  const bytes = fromBase64(text);
  return new Int8Array(bytes.buffer, bytes.byteOffset, bytes.length); // the same bytes, read as signed
}

/** The cosine of two packed vectors (0 when their lengths differ or one is zero). */
export function packedCosine(a: Int8Array, b: Int8Array): number {
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
