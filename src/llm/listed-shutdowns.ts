/**
 * The provider's own word on when its models shut down (contract v4, "Providers as they fail":
 * model lifecycle). OpenAI's `GET /v1/models` lists each model the credential can call with its
 * `shutdown_date` (a date, or null when none is announced); Anthropic's lists none. A submission
 * reads the listing of the credential its OpenAI models are called with at most once a day (an
 * hour after a failed read), and keeps it in D1 (`model_listings`) under the credential's digest:
 * a tenant's own key or base URL has a listing of its own, so what one tenant's server answers
 * never dates another tenant's models. Bounded per read: one GET, LISTING_TIMEOUT_MS, at most
 * MAX_LISTING_BYTES of answer, and 2,000 dated models kept (./model-listing.ts). A read that fails keeps the last
 * good listing; without one the shipped table alone speaks (./lifecycle.ts).
 */
import { policyFetch } from "../net/destination";
import { textWithin } from "../net/read-limited";
import { credentialId } from "./credential";
import { parseListing } from "./model-listing";
import type { EndpointData } from "./types";

export const LISTING_FRESH_MS = 86_400_000; // a listing read within a day is used as it is
export const LISTING_RETRY_MS = 3_600_000; // after a failed read, the next try
const LISTING_TIMEOUT_MS = 3_000;
const MAX_LISTING_BYTES = 2_000_000; // OpenAI lists a few hundred models in ~60 KB

interface ListingRow {
  read_at: number;
  ok: number;
  shutdowns: string;
}

const NONE: ReadonlyMap<string, string> = new Map();

/**
 * The shutdown dates OpenAI lists for the tenant's OpenAI credential (`endpoint`: its endpoint, as
 * the submission resolved it; model name → date): the stored listing while it is fresh, else read again now. Never throws: a failure keeps what was stored.
 */
export async function listedShutdowns(env: Env, endpoint: EndpointData | null, now: number): Promise<ReadonlyMap<string, string>> {
  try {
    if (!endpoint?.apiKey) return NONE;
    const id = await credentialId("openai", endpoint);
    const row = await env.DB.prepare("SELECT read_at, ok, shutdowns FROM model_listings WHERE credential_id = ?").bind(id).first<ListingRow>();
    const kept = row ? new Map(Object.entries(JSON.parse(row.shutdowns) as Record<string, string>)) : NONE;
    if (row && now - row.read_at < (row.ok ? LISTING_FRESH_MS : LISTING_RETRY_MS)) return kept;
    const read = await readListing(env, endpoint);
    const shutdowns = read ?? kept;
    await env.DB.prepare(
      `INSERT INTO model_listings (credential_id, read_at, ok, shutdowns) VALUES (?, ?, ?, ?)
       ON CONFLICT (credential_id) DO UPDATE SET read_at = excluded.read_at, ok = excluded.ok, shutdowns = excluded.shutdowns`,
    )
      .bind(id, now, read ? 1 : 0, JSON.stringify(Object.fromEntries(shutdowns)))
      .run();
    return shutdowns;
  } catch (err) {
    console.error("could not read the provider's model listing; the shipped retirement table speaks alone", err);
    return NONE;
  }
}

async function readListing(env: Env, endpoint: { apiKey: string | null; baseUrl: string | null; policy: boolean }): Promise<Map<string, string> | null> {
  const base = endpoint.baseUrl ?? "https://api.openai.com/v1";
  const url = `${base}${base.endsWith("/") ? "" : "/"}models`;
  const send = endpoint.policy ? policyFetch(env) : fetch; // a tenant's base URL is a tenant's destination
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), LISTING_TIMEOUT_MS);
  try {
    const res = await send(url, { headers: { authorization: `Bearer ${endpoint.apiKey ?? ""}`, accept: "application/json" }, signal: controller.signal });
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      return null;
    }
    const text = await textWithin(res, MAX_LISTING_BYTES);
    return text === null ? null : parseListing(text);
  } catch {
    return null; // unreachable, refused or too slow: the last good listing stands
  } finally {
    clearTimeout(timer);
  }
}
