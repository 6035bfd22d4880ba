/**
 * The one destination policy for every URL a tenant gives us: webhooks, http tools, MCP servers
 * and provider base URLs.
 *
 * - `https://` only, unless ALLOW_HTTP_DESTINATIONS=true (default outside production; the older
 *   ALLOW_HTTP_WEBHOOKS is read too);
 * - never a blocked address (./addresses: loopback, private, link-local, CGNAT, multicast,
 *   reserved, and IPv6 forms embedding them), a local name (`localhost`, `*.local`,
 *   `*.internal`…), a trailing-dot host, or a numeric host form other than a.b.c.d (`2130706433`,
 *   `0x7f.1`, `127.1`) — unless ALLOW_PRIVATE_DESTINATIONS=true (default outside production) or
 *   the host is in DESTINATION_ALLOWLIST (comma list of `host`, `host:port` or `*.suffix`);
 * - a literal address is judged at submission; a name when it is used: with
 *   DESTINATION_DNS_RESOLVER (a DNS-over-HTTPS JSON endpoint; Cloudflare's by default in
 *   production) every A/AAAA answer must pass too;
 * - redirects are followed by hand (at most 5), each hop judged again (`fetchWithPolicy`).
 * URLs are at most 2,048 characters.
 */
import { isProduction, readVar } from "../config";
import { blockedAddress, isIpLiteral, parseIpv4 } from "./addresses";

export const MAX_URL_CHARS = 2_048;
const MAX_REDIRECTS = 5;
const DNS_TIMEOUT_MS = 5_000;
const DEFAULT_PRODUCTION_RESOLVER = "https://cloudflare-dns.com/dns-query";
const LOCAL_SUFFIXES = ["localhost", "local", "internal", "localdomain", "home.arpa"];

export class DestinationRefused extends Error {
  constructor(
    readonly url: string,
    readonly reason: string,
  ) {
    super(`${url.slice(0, 200)} is not an allowed destination: ${reason}`);
    this.name = "DestinationRefused";
  }
}

function flag(env: object, name: string): boolean | undefined {
  const raw = readVar(env, name);
  return raw === undefined ? undefined : raw === "true";
}

export function allowHttp(env: object): boolean {
  return flag(env, "ALLOW_HTTP_DESTINATIONS") ?? flag(env, "ALLOW_HTTP_WEBHOOKS") ?? !isProduction(env);
}

const allowPrivate = (env: object): boolean => flag(env, "ALLOW_PRIVATE_DESTINATIONS") ?? !isProduction(env);

function allowlisted(env: object, url: URL): boolean {
  const entries = (readVar(env, "DESTINATION_ALLOWLIST") ?? "")
    .split(",")
    .map((e) => e.trim().toLowerCase())
    .filter(Boolean);
  const host = url.hostname.toLowerCase();
  return entries.some((entry) =>
    entry.startsWith("*.") ? host.endsWith(entry.slice(1)) : entry === host || entry === `${host}:${url.port}` || entry === url.host,
  );
}

/** The host exactly as written in the URL (before the URL parser rewrites numeric forms). */
function writtenHost(raw: string): string {
  const afterScheme = raw.replace(/^[a-z][a-z0-9+.-]*:\/\//i, "");
  const authority = afterScheme.split(/[/?#]/)[0] ?? "";
  const host = authority.slice(authority.lastIndexOf("@") + 1);
  return (host.startsWith("[") ? host.slice(0, host.indexOf("]") + 1) : host.replace(/:\d*$/, "")).toLowerCase();
}

const isLocalName = (host: string): boolean => !isIpLiteral(host) && LOCAL_SUFFIXES.some((s) => host === s || host.endsWith(`.${s}`));

/** A literal blocked address or a local name (`localhost`, `*.internal`…). */
export const isPrivateHost = (hostname: string): boolean => {
  const host = hostname.toLowerCase();
  return blockedAddress(host) !== null || isLocalName(host);
};

function hostProblem(url: URL, raw: string): string | null {
  const host = url.hostname.toLowerCase();
  if (host.endsWith(".")) return "a host with a trailing dot is not accepted";
  if (parseIpv4(host) && writtenHost(raw) !== host) return "numeric host forms other than a.b.c.d are not accepted";
  const blocked = blockedAddress(host);
  if (blocked) return `must not point to a private or local destination: the host is ${blocked}`;
  if (isLocalName(host)) return "must not point to a private or local destination: the host is a local name";
  return null;
}

/** Why this URL may not be reached under the deployment's policy (judged without DNS), or null. */
export function destinationProblem(env: object, raw: string): string | null {
  if (raw.length > MAX_URL_CHARS) return `a URL is at most ${MAX_URL_CHARS} characters`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "not a URL";
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return "must be an https:// URL";
  if (url.protocol === "http:" && !allowHttp(env)) return "must be https:// (this deployment refuses http://)";
  if (allowPrivate(env) || allowlisted(env, url)) return null;
  return hostProblem(url, raw);
}

function resolver(env: object): string | null {
  return readVar(env, "DESTINATION_DNS_RESOLVER") ?? (isProduction(env) ? DEFAULT_PRODUCTION_RESOLVER : null);
}

/** Why the addresses this URL's name resolves to may not be reached, or null. */
async function resolvedProblem(env: object, url: URL): Promise<string | null> {
  const endpoint = resolver(env);
  if (!endpoint || isIpLiteral(url.hostname) || allowPrivate(env) || allowlisted(env, url)) return null;
  const addresses: string[] = [];
  for (const type of ["A", "AAAA"]) {
    const query = `${endpoint}?name=${encodeURIComponent(url.hostname)}&type=${type}`;
    const res = await fetch(query, { headers: { accept: "application/dns-json" }, signal: AbortSignal.timeout(DNS_TIMEOUT_MS) });
    if (!res.ok) return `the name could not be resolved (resolver answered ${res.status})`;
    const body = (await res.json()) as { Answer?: { type: number; data: string }[] };
    for (const answer of body.Answer ?? []) if (answer.type === 1 || answer.type === 28) addresses.push(answer.data);
  }
  if (addresses.length === 0) return "the name does not resolve to an address";
  for (const address of addresses) {
    const blocked = blockedAddress(address);
    if (blocked) return `the name resolves to ${blocked}`;
  }
  return null;
}

/** Throws DestinationRefused unless the policy lets this URL be reached now. */
export async function assertDestination(env: object, raw: string): Promise<void> {
  const problem = destinationProblem(env, raw) ?? (await resolvedProblem(env, new URL(raw)));
  if (problem) throw new DestinationRefused(raw, problem);
}

/** For a URL judged at submission: throws DestinationRefused unless its name resolves to allowed addresses now. */
export async function assertResolvedDestination(env: object, raw: string): Promise<void> {
  const problem = await resolvedProblem(env, new URL(raw));
  if (problem) throw new DestinationRefused(raw, problem);
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * `fetch` under the policy: every hop is judged before it is requested, and redirects are
 * followed by hand. A 303 (or a 301/302 after a POST) continues as a GET without a body.
 */
export async function fetchWithPolicy(env: object, input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  let request = new Request(input, init);
  for (let hop = 0; ; hop++) {
    await assertDestination(env, request.url);
    const response = await fetch(request.clone(), { redirect: "manual" });
    const location = response.headers.get("location");
    if (!REDIRECTS.has(response.status) || location === null) return response;
    await response.body?.cancel();
    if (hop >= MAX_REDIRECTS) throw new DestinationRefused(request.url, `more than ${MAX_REDIRECTS} redirects`);
    const next = new URL(location, request.url).toString();
    const toGet = response.status === 303 || ((response.status === 301 || response.status === 302) && request.method === "POST");
    request = toGet ? new Request(next, { method: "GET", headers: request.headers, signal: request.signal }) : new Request(next, request);
  }
}

/** A `fetch` bound to the policy, for SDKs and transports that take one. */
export function policyFetch(env: object): typeof fetch {
  return ((input: string | URL | Request, init?: RequestInit) => fetchWithPolicy(env, input, init)) as typeof fetch;
}
