/** Tenants and their API keys in D1. Keys are stored only as SHA-256 hashes. */
import { newId, randomBase32 } from "../lib/ids";
import { sha256Hex } from "../lib/crypto";

export interface Tenant {
  id: string;
  name: string;
  created_at: string;
}

export interface CreatedKey {
  id: string;
  key: string;
  prefix: string;
  created_at: string;
}

export interface AuthenticatedKey {
  keyId: string;
  tenantId: string;
  keyHash: string;
  lastUsedAt: string | null;
}

const KEY_PREFIX = "fo_";
const KEY_RANDOM_BYTES = 32; // 256 bits of entropy
const SHOWN_PREFIX_CHARS = 11; // "fo_" + 8 chars: enough to tell keys apart in a list

export async function createTenant(db: D1Database, name: string): Promise<Tenant> {
  const tenant = { id: newId("ten"), name, created_at: new Date().toISOString() };
  await db.prepare("INSERT INTO tenants (id, name, created_at) VALUES (?, ?, ?)").bind(tenant.id, tenant.name, tenant.created_at).run();
  return tenant;
}

export async function tenantExists(db: D1Database, tenantId: string): Promise<boolean> {
  const row = await db.prepare("SELECT 1 AS x FROM tenants WHERE id = ?").bind(tenantId).first();
  return row !== null;
}

export async function createKey(db: D1Database, tenantId: string, name: string): Promise<CreatedKey> {
  const key = `${KEY_PREFIX}${randomBase32(KEY_RANDOM_BYTES)}`;
  const created = {
    id: newId("key"),
    key,
    prefix: key.slice(0, SHOWN_PREFIX_CHARS),
    created_at: new Date().toISOString(),
  };
  await db
    .prepare("INSERT INTO api_keys (id, tenant_id, name, prefix, key_hash, created_at) VALUES (?, ?, ?, ?, ?, ?)")
    .bind(created.id, tenantId, name, created.prefix, await sha256Hex(key), created.created_at)
    .run();
  return created;
}

/** Revokes a key; returns false when no live key has that id. */
export async function revokeKey(db: D1Database, keyId: string): Promise<boolean> {
  const result = await db.prepare("UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL").bind(new Date().toISOString(), keyId).run();
  return result.meta.changes > 0;
}

export async function findLiveKeyByHash(db: D1Database, keyHash: string): Promise<AuthenticatedKey | null> {
  const row = await db
    .prepare("SELECT id, tenant_id, key_hash, last_used_at FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL")
    .bind(keyHash)
    .first<{ id: string; tenant_id: string; key_hash: string; last_used_at: string | null }>();
  if (!row) return null;
  return { keyId: row.id, tenantId: row.tenant_id, keyHash: row.key_hash, lastUsedAt: row.last_used_at };
}

export async function touchKey(db: D1Database, keyId: string, now: Date): Promise<void> {
  await db.prepare("UPDATE api_keys SET last_used_at = ? WHERE id = ?").bind(now.toISOString(), keyId).run();
}
