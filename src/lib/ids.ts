/** Opaque, prefixed ids (`job_…`, `ses_…`, `key_…`, `ten_…`): 16 random bytes as lowercase base32. */
const ALPHABET = "abcdefghijklmnopqrstuvwxyz234567";

export function randomBase32(bytes: number): string {
  const buf = crypto.getRandomValues(new Uint8Array(bytes));
  let out = "";
  let bits = 0;
  let value = 0;
  for (const byte of buf) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

export type IdPrefix = "job" | "ses" | "key" | "ten" | "whd";

export const newId = (prefix: IdPrefix): string => `${prefix}_${randomBase32(16)}`;
