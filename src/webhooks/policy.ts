/**
 * Webhook URL safety and the retry schedule.
 * - `https://` only, unless ALLOW_HTTP_WEBHOOKS=true (the default outside production);
 * - in production, a host that is a literal private, loopback or link-local address is refused;
 * - failed deliveries are retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h
 *   (WEBHOOK_RETRY_SCHEDULE_SECS overrides it), then marked failed.
 */
import { isProduction, readVar } from "../config";

export const DEFAULT_SCHEDULE_SECS = [5, 300, 1800, 7200, 18000, 36000, 36000];
export const QUEUE_MAX_DELAY_SECS = 43_200; // Cloudflare Queues' longest delaySeconds (12 h)

export function retrySchedule(env: object): number[] {
  const raw = readVar(env, "WEBHOOK_RETRY_SCHEDULE_SECS");
  if (!raw) return DEFAULT_SCHEDULE_SECS;
  const parsed = raw.split(",").map((s) => Number(s.trim()));
  return parsed.every((n) => Number.isFinite(n) && n >= 0) && parsed.length > 0 ? parsed : DEFAULT_SCHEDULE_SECS;
}

export function allowHttp(env: object): boolean {
  const raw = readVar(env, "ALLOW_HTTP_WEBHOOKS");
  return raw === undefined ? !isProduction(env) : raw === "true";
}

function ipv4(host: string): number[] | null {
  const parts = host.split(".");
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p))) return null;
  const nums = parts.map(Number);
  return nums.every((n) => n <= 255) ? nums : null;
}

/** A literal private (RFC 1918, ULA), loopback, link-local, unspecified or CGNAT address. */
export function isPrivateHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  const v4 = ipv4(host);
  if (v4) {
    const [a, b] = v4 as [number, number, number, number];
    return a === 10 || a === 127 || a === 0 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) ||
      (a === 169 && b === 254) || (a === 100 && b >= 64 && b <= 127);
  }
  if (host.includes(":")) {
    if (host === "::1" || host === "::") return true;
    if (/^f[cd][0-9a-f]{0,2}:/.test(host) || /^fe[89ab][0-9a-f]?:/.test(host)) return true;
    const dotted = host.match(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/);
    if (dotted) return isPrivateHost(dotted[1] as string);
    const hex = host.match(/^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/); // how URL writes ::ffff:10.0.0.1
    if (hex) {
      const [hi, lo] = [parseInt(hex[1] as string, 16), parseInt(hex[2] as string, 16)];
      return isPrivateHost(`${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`);
    }
    return false;
  }
  return false;
}

/** Why this webhook URL is refused here, or null. */
export function webhookUrlProblem(env: object, raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "not a URL";
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return "must be an https:// URL";
  if (url.protocol === "http:" && !allowHttp(env)) return "must be https:// (this deployment refuses http:// webhooks)";
  if (isProduction(env) && isPrivateHost(url.hostname)) return "must not point to a private, loopback or link-local address";
  return null;
}
