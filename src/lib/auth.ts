/**
 * Authentication middleware. Tenant routes take `Authorization: Bearer <api key>`; the tenant id
 * set on the context comes only from the key, never from the request. Admin routes take the
 * deployment's ADMIN_TOKEN. Every failure is the same 401, so a caller learns nothing about why.
 */
import { createMiddleware } from "hono/factory";
import { adminToken } from "../config";
import { constantTimeEqual, sha256Hex } from "./crypto";
import { unauthorized } from "./errors";
import { findLiveKeyByHash, touchKey } from "../db/tenants";
import type { AppEnv } from "../app-env";

const LAST_USED_RESOLUTION_MS = 60_000; // write last_used_at at most once a minute per key

function bearerToken(header: string | undefined): string | null {
  const match = header?.match(/^Bearer\s+(\S+)\s*$/i);
  return match?.[1] ?? null;
}

export const requireApiKey = createMiddleware<AppEnv>(async (c, next) => {
  const token = bearerToken(c.req.header("authorization"));
  if (!token) throw unauthorized();
  const hash = await sha256Hex(token);
  const key = await findLiveKeyByHash(c.env.DB, hash);
  if (!key || !constantTimeEqual(key.keyHash, hash)) throw unauthorized();
  const now = new Date();
  if (!key.lastUsedAt || now.getTime() - Date.parse(key.lastUsedAt) > LAST_USED_RESOLUTION_MS) {
    c.executionCtx.waitUntil(touchKey(c.env.DB, key.keyId, now));
  }
  c.set("tenantId", key.tenantId);
  c.set("keyId", key.keyId);
  await next();
});

export const requireAdmin = createMiddleware<AppEnv>(async (c, next) => {
  const token = bearerToken(c.req.header("authorization"));
  const expected = adminToken(c.env);
  // Compare digests: equal lengths, so the comparison takes the same time whatever the token's length.
  if (!token || !expected || !constantTimeEqual(await sha256Hex(token), await sha256Hex(expected))) throw unauthorized();
  await next();
});
