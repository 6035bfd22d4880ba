/**
 * Deployment configuration: every variable the Worker reads, its default and its bounds.
 * Bindings are typed by `wrangler types` (worker-configuration.d.ts); plain variables and secrets
 * are optional, so they are read here by name with documented defaults (see .dev.vars.example).
 */
import { ConfigurationError } from "./lib/errors";
import { DEFAULT_RENDER_LIMITS, type RenderLimits } from "./template/render-budget";

/** Used only when ENVIRONMENT is not "production"; refused in production. */
export const LOCAL_ADMIN_TOKEN = "fanout-local-admin-token";
/** A fixed 32-byte key so local runs work with no set-up; refused in production. */
export const LOCAL_ENCRYPTION_KEY = "ZmFub3V0LWxvY2FsLWRldi1lbmNyeXB0aW9uLWtleSE=";

export const LIMIT_DEFAULTS = {
  maxItemsPerJob: 10_000,
  maxItemBytes: 256_000, // one input as JSON; well under the 2 MB SQLite row limit of DO storage
  maxRequestBytes: 32 * 1024 * 1024, // DO RPC arguments are capped at 32 MiB
  maxOutputBytes: 256_000, // one stored result's output
  waitLimitSecs: 60, // ?wait=true gives up (202) after this
  maxActiveJobs: 100, // queued + running jobs per tenant: one tenant cannot flood a shared deployment
} as const;

export interface Limits {
  maxItemsPerJob: number;
  maxItemBytes: number;
  maxRequestBytes: number;
  maxOutputBytes: number;
  waitLimitSecs: number;
  maxActiveJobs: number;
}

type Vars = Record<string, unknown>;

export function readVar(env: object, name: string): string | undefined {
  const value = (env as Vars)[name];
  return typeof value === "string" && value.length > 0 ? value : undefined;
}

function readPositiveInt(env: object, name: string, fallback: number): number {
  const raw = readVar(env, name);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  return Number.isInteger(n) && n > 0 ? n : fallback;
}

/** JOB_RETENTION_DAYS: ended jobs older than this are deleted by the cron (default 30). */
export const retentionDays = (env: object): number => readPositiveInt(env, "JOB_RETENTION_DAYS", 30);

export const isProduction = (env: object): boolean => readVar(env, "ENVIRONMENT") === "production";

export function limits(env: object): Limits {
  return {
    maxItemsPerJob: readPositiveInt(env, "MAX_ITEMS_PER_JOB", LIMIT_DEFAULTS.maxItemsPerJob),
    maxItemBytes: readPositiveInt(env, "MAX_ITEM_BYTES", LIMIT_DEFAULTS.maxItemBytes),
    maxRequestBytes: readPositiveInt(env, "MAX_REQUEST_BYTES", LIMIT_DEFAULTS.maxRequestBytes),
    maxOutputBytes: readPositiveInt(env, "MAX_OUTPUT_BYTES", LIMIT_DEFAULTS.maxOutputBytes),
    waitLimitSecs: readPositiveInt(env, "WAIT_LIMIT_SECS", LIMIT_DEFAULTS.waitLimitSecs),
    maxActiveJobs: readPositiveInt(env, "MAX_ACTIVE_JOBS_PER_TENANT", LIMIT_DEFAULTS.maxActiveJobs),
  };
}

/** TEMPLATE_MAX_RANGE, TEMPLATE_MAX_STEPS, TEMPLATE_MAX_DEPTH, TEMPLATE_MAX_OUTPUT_CHARS: see template/render-budget.ts. */
export function renderLimits(env: object): RenderLimits {
  return {
    maxRange: readPositiveInt(env, "TEMPLATE_MAX_RANGE", DEFAULT_RENDER_LIMITS.maxRange),
    maxSteps: readPositiveInt(env, "TEMPLATE_MAX_STEPS", DEFAULT_RENDER_LIMITS.maxSteps),
    maxDepth: readPositiveInt(env, "TEMPLATE_MAX_DEPTH", DEFAULT_RENDER_LIMITS.maxDepth),
    maxOutputChars: readPositiveInt(env, "TEMPLATE_MAX_OUTPUT_CHARS", DEFAULT_RENDER_LIMITS.maxOutputChars),
  };
}

/** SSE_KEEPALIVE_SECS: seconds between `: keepalive` comments on idle event streams (default 15, at most 20). */
export function sseKeepaliveMs(env: object): number {
  return Math.min(readPositiveInt(env, "SSE_KEEPALIVE_SECS", 15), 20) * 1000;
}

function misconfigured(message: string): ConfigurationError {
  console.error(`configuration error: ${message}`);
  return new ConfigurationError("The server is misconfigured.");
}

/** The admin token, or null when admin access is impossible (production without a real token). */
export function adminToken(env: object): string | null {
  const token = readVar(env, "ADMIN_TOKEN");
  if (isProduction(env)) {
    if (!token || token === LOCAL_ADMIN_TOKEN) {
      console.error("configuration error: ADMIN_TOKEN must be set to a secret in production");
      return null;
    }
    return token;
  }
  return token ?? LOCAL_ADMIN_TOKEN;
}

export function encryptionKey(env: object): string {
  const key = readVar(env, "ENCRYPTION_KEY");
  if (isProduction(env) && (!key || key === LOCAL_ENCRYPTION_KEY)) {
    throw misconfigured("ENCRYPTION_KEY must be set to a secret in production");
  }
  return key ?? LOCAL_ENCRYPTION_KEY;
}
