/**
 * Standard Webhooks signing (standardwebhooks.com): `webhook-signature: v1,<base64 HMAC-SHA256>`
 * over `{webhook-id}.{webhook-timestamp}.{body}`, keyed with the base64 part of `whsec_…`.
 */
import { fromBase64, toBase64 } from "../lib/base64";

export const SECRET_PREFIX = "whsec_";
export const SECRET_MIN_BYTES = 24;
export const SECRET_MAX_BYTES = 64;
const GENERATED_SECRET_BYTES = 32;

const encoder = new TextEncoder();

export function generateSecret(): string {
  return SECRET_PREFIX + toBase64(crypto.getRandomValues(new Uint8Array(GENERATED_SECRET_BYTES)));
}

/** Why a `whsec_` secret is unusable, or null when it is fine. */
export function secretProblem(secret: string): string | null {
  if (!secret.startsWith(SECRET_PREFIX)) return "must start with whsec_";
  let bytes: Uint8Array;
  try {
    bytes = fromBase64(secret.slice(SECRET_PREFIX.length));
  } catch {
    return "the part after whsec_ must be base64";
  }
  if (bytes.byteLength < SECRET_MIN_BYTES || bytes.byteLength > SECRET_MAX_BYTES) {
    return `must hold ${SECRET_MIN_BYTES}–${SECRET_MAX_BYTES} bytes (got ${bytes.byteLength})`;
  }
  return null;
}

export async function sign(secret: string, webhookId: string, timestampSecs: number, body: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", fromBase64(secret.slice(SECRET_PREFIX.length)), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = await crypto.subtle.sign("HMAC", key, encoder.encode(`${webhookId}.${timestampSecs}.${body}`));
  return `v1,${toBase64(new Uint8Array(mac))}`;
}
