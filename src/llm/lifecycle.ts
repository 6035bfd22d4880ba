/**
 * Models that retire (contract v4, "Providers as they fail": model lifecycle). The shipped table
 * holds the shutdown dates the providers had announced on the date in RETIREMENTS_READ_ON, with
 * each one's recommended replacement; a deployment adds, moves or removes dates with the
 * `MODEL_RETIREMENTS` variable, JSON `{"<provider>/<model>": {"shutdown_date": "YYYY-MM-DD",
 * "replacement"?: "<provider>/<model>"} | null}` (null: no shutdown known, e.g. capacity of its own
 * kept after the provider's date). A model matches its table name exactly or as a dated snapshot
 * of it (`gpt-4o-mini-2024-07-18`), as prices do.
 *
 * Between the two, the provider's own word where it gives one: OpenAI's `GET /v1/models` lists a
 * `shutdown_date` per model, read at most daily per credential (./listed-shutdowns.ts). The order: the
 * deployment's `MODEL_RETIREMENTS`, then the provider's listing, then the shipped table (whose
 * replacement a listed date keeps, the listing naming none).
 *
 * A job on a model past its shutdown is 400 `model_retired`; one whose model shuts down within
 * RETIRING_WITHIN_DAYS, or before the job's deadline, runs with a `model_retiring` warning.
 */
import { deploymentTable, modelEntries, snapshotOf } from "./model-tables";
import { ConfigurationError } from "../lib/errors";

/** The date the shipped table was read from the providers' deprecation pages. */
export const RETIREMENTS_READ_ON = "2026-11-28";

/** A job whose model shuts down within this many days is told so when it is submitted. */
export const RETIRING_WITHIN_DAYS = 30;

export interface Retirement {
  /** The first day the provider no longer serves the model (UTC). */
  shutdown_date: string;
  replacement: string | null;
}

/**
 * OpenAI: developers.openai.com/api/docs/deprecations (its `GET /v1/models` carries the same
 * `shutdown_date`); Anthropic: platform.claude.com/docs/about-claude/model-deprecations, its
 * release notes, and the SDK's own end-of-life warning. Each replacement is the one the provider
 * recommended (null where the page named none). Snapshots of a listed name match it.
 */
const SHIPPED: Record<string, Retirement> = {
  "openai/gpt-3.5-turbo": { shutdown_date: "2026-10-23", replacement: "openai/gpt-5.6-terra" },
  "openai/gpt-4": { shutdown_date: "2026-10-23", replacement: "openai/gpt-5.6-sol" },
  "openai/gpt-4-turbo": { shutdown_date: "2026-10-23", replacement: "openai/gpt-5.6-sol" },
  "openai/gpt-4.1-nano": { shutdown_date: "2026-10-23", replacement: null },
  "openai/o1": { shutdown_date: "2026-10-23", replacement: "openai/gpt-5.6-sol" },
  "openai/o3-mini": { shutdown_date: "2026-10-23", replacement: "openai/gpt-5.6-sol" },
  "openai/o4-mini": { shutdown_date: "2026-10-23", replacement: "openai/gpt-5.6-terra" },
  "openai/gpt-5": { shutdown_date: "2026-12-11", replacement: "openai/gpt-6.1-sol" },
  "openai/gpt-5-mini": { shutdown_date: "2026-12-11", replacement: "openai/gpt-6.1-terra" },
  "openai/gpt-5-nano": { shutdown_date: "2026-12-11", replacement: null },
  "openai/o3": { shutdown_date: "2026-12-11", replacement: "openai/gpt-6.1-sol" },
  "openai/gpt-4o": { shutdown_date: "2027-01-14", replacement: "openai/gpt-6.1-sol" },
  "openai/gpt-4o-mini": { shutdown_date: "2027-01-14", replacement: "openai/gpt-6-luna" },
  "openai/gpt-4.1": { shutdown_date: "2027-01-14", replacement: "openai/gpt-6.1-sol" },
  "openai/gpt-4.1-mini": { shutdown_date: "2027-01-14", replacement: "openai/gpt-6-luna" },
  "openai/gpt-5.1": { shutdown_date: "2027-04-01", replacement: null },
  "anthropic/claude-sonnet-4": { shutdown_date: "2026-06-15", replacement: "anthropic/claude-sonnet-4-6" },
  "anthropic/claude-opus-4": { shutdown_date: "2026-06-15", replacement: "anthropic/claude-opus-4-8" },
  "anthropic/claude-sonnet-4-5": { shutdown_date: "2026-11-30", replacement: "anthropic/claude-sonnet-4-6" },
};

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const MAX_OVERRIDES = 1_000;

function validDate(text: unknown): text is string {
  return typeof text === "string" && DATE.test(text) && !Number.isNaN(Date.parse(`${text}T00:00:00Z`));
}

/** The deployment's `MODEL_RETIREMENTS`, parsed (a ConfigurationError names what is wrong). */
export function parseRetirements(text: string): Map<string, Retirement | null> {
  const entries = modelEntries(text, "MODEL_RETIREMENTS", '{"<provider>/<model>": {"shutdown_date": "YYYY-MM-DD", "replacement"?} | null}');
  if (entries.length > MAX_OVERRIDES) throw new ConfigurationError(`MODEL_RETIREMENTS holds at most ${MAX_OVERRIDES} models`);
  const out = new Map<string, Retirement | null>();
  for (const [model, raw] of entries) {
    if (raw === null) {
      out.set(model, null);
      continue;
    }
    const fields = typeof raw === "object" && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
    if (!validDate(fields.shutdown_date)) throw new ConfigurationError(`MODEL_RETIREMENTS: "${model}".shutdown_date must be a date YYYY-MM-DD`);
    const replacement = fields.replacement ?? null;
    if (replacement !== null && (typeof replacement !== "string" || replacement.length > 200)) {
      throw new ConfigurationError(`MODEL_RETIREMENTS: "${model}".replacement must be a model name (at most 200 characters) or absent`);
    }
    out.set(model, { shutdown_date: fields.shutdown_date, replacement });
  }
  return out;
}

const deploymentRetirements = deploymentTable("MODEL_RETIREMENTS", parseRetirements);

function lookup(own: Map<string, Retirement | null> | null, model: string): Retirement | null | undefined {
  if (own?.has(model)) return own.get(model);
  return Object.hasOwn(SHIPPED, model) ? SHIPPED[model] : undefined;
}

/** What the provider's listing says of a model (`listed`: model name → shutdown date, OpenAI's; ./model-listing.ts). */
function listedOf(listed: ReadonlyMap<string, string> | null, model: string, shipped: Retirement | null | undefined): Retirement | undefined {
  if (!listed || !model.startsWith("openai/")) return undefined;
  const date = listed.get(model.slice("openai/".length));
  return date ? { shutdown_date: date, replacement: shipped?.replacement ?? null } : undefined;
}

/** The model's announced shutdown (`<provider>/<name>`), or null when none is known. */
export function retirementOf(env: object, model: string, listed: ReadonlyMap<string, string> | null = null): Retirement | null {
  const own = deploymentRetirements(env);
  if (own?.has(model)) return own.get(model) ?? null;
  const shipped = lookup(null, model);
  const exact = listedOf(listed, model, shipped) ?? shipped;
  if (exact !== undefined) return exact;
  const snapshot = snapshotOf(model);
  return snapshot ? (lookup(own, snapshot) ?? null) : null;
}

/** What a submission says about a model: retired (refused), retiring (a warning), or nothing. */
export type Lifecycle = { state: "retired"; retirement: Retirement } | { state: "retiring"; retirement: Retirement } | null;

const DAY_MS = 86_400_000;

/** `deadline`: when the job must be done by, if it says (ms); a shutdown before it is a warning too. `listed`: the provider's listing (./listed-shutdowns.ts). */
export function lifecycleOf(
  env: object,
  model: string,
  now: number,
  deadline: number | null = null,
  listed: ReadonlyMap<string, string> | null = null,
): Lifecycle {
  const retirement = retirementOf(env, model, listed);
  if (!retirement) return null;
  const shutdown = Date.parse(`${retirement.shutdown_date}T00:00:00Z`);
  if (shutdown <= now) return { state: "retired", retirement };
  if (shutdown - now <= RETIRING_WITHIN_DAYS * DAY_MS || (deadline !== null && shutdown <= deadline)) return { state: "retiring", retirement };
  return null;
}

/** The warning a job on a retiring model carries in its 202 answer and its view. */
export interface ModelWarning {
  code: "model_retiring";
  model: string;
  shutdown_date: string;
  replacement: string | null;
}
