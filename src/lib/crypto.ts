/**
 * Hashing, constant-time comparison and AES-GCM sealing of secrets at rest.
 * Sealed values are `base64(iv || ciphertext)` with a fresh 12-byte IV each time (NIST SP 800-38D).
 */
import { fromBase64, toBase64 } from "./base64";

const encoder = new TextEncoder();
const IV_BYTES = 12; // the GCM standard IV size

export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", encoder.encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Compares two strings without an early exit, so timing does not tell how much matched. */
export function constantTimeEqual(a: string, b: string): boolean {
  const x = encoder.encode(a);
  const y = encoder.encode(b);
  if (x.byteLength !== y.byteLength) return false;
  return crypto.subtle.timingSafeEqual(x, y);
}

const keyCache = new Map<string, Promise<CryptoKey>>();

function importAesKey(base64Key: string): Promise<CryptoKey> {
  let key = keyCache.get(base64Key);
  if (!key) {
    const raw = fromBase64(base64Key);
    if (raw.byteLength !== 32) throw new Error("ENCRYPTION_KEY must be 32 bytes, base64-encoded");
    key = crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]);
    keyCache.set(base64Key, key);
  }
  return key;
}

export async function seal(plaintext: string, base64Key: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const key = await importAesKey(base64Key);
  const sealed = await crypto.subtle.encrypt({ name: "AES-GCM", iv }, key, encoder.encode(plaintext));
  const out = new Uint8Array(IV_BYTES + sealed.byteLength);
  out.set(iv);
  out.set(new Uint8Array(sealed), IV_BYTES);
  return toBase64(out);
}

export async function unseal(sealed: string, base64Key: string): Promise<string> {
  const bytes = fromBase64(sealed);
  const key = await importAesKey(base64Key);
  const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv: bytes.subarray(0, IV_BYTES) }, key, bytes.subarray(IV_BYTES));
  return new TextDecoder().decode(plain);
}
