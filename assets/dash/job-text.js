// @ts-check
/** A job's facts as the job page writes them (./job.js): dollars, prompt-cache reads, its execution mode and batches, its pacing. */
import { num } from "./ui.js";

/** The provider's prompt cache's part of the input tokens, when it had one. */
export function promptCached(usage) {
  const read = usage.cached_input_tokens ?? 0;
  return read > 0 ? ` (${num(read)} from the provider's prompt cache)` : "";
}

/** Dollars as the API counts them: null when a model has no price. */
export function dollars(usd) {
  if (usd === undefined) return "—";
  if (usd === null) return "unknown (a model has no price)";
  return `$${usd < 1 ? usd.toFixed(6) : usd.toFixed(2)}`;
}

/** The job's execution mode, and its provider batches when it has any. */
export function executionText(job) {
  const mode = job.execution?.mode ?? "realtime";
  const batches = job.batches ?? [];
  if (batches.length === 0) return mode;
  const open = batches.filter((b) => b.ended_at === null).length;
  const lines = batches.reduce((n, b) => n + b.requests, 0);
  return `${mode} · ${num(batches.length)} provider batch${batches.length === 1 ? "" : "es"} (${num(lines)} lines${open ? `, ${num(open)} running` : ""})`;
}

const PACED_BY = {
  job: "the job's rate_limit",
  declared: "the key's declared limits",
  headers: "the provider's headers",
  adaptive: "adaptive concurrency, after throttles",
};

/** One model's pacing, as a line: its limits, where they come from, and the job's share while others wait. */
function pacedText(p) {
  const limits = [p.rpm !== null ? `${num(p.rpm)} requests/min` : null, p.tpm !== null ? `${num(p.tpm)} tokens/min` : null].filter(Boolean).join(" · ");
  const share = p.share !== null && p.share < 1 ? `, ${Math.round(p.share * 100)} % of it` : "";
  return `${limits || "no rate limit known"} (${PACED_BY[p.source] ?? p.source}${share})`;
}

/** The job's pacing (its model's, and each other model's it calls); null when nothing paces it. */
export function pacingText(job) {
  const pacing = job.pacing;
  if (!pacing) return null;
  const others = Object.entries(pacing.models ?? {}).filter(([, p]) => p.source !== null);
  if (pacing.source === null && others.length === 0) return null;
  const own = pacing.source === null ? null : pacedText(pacing);
  return [own, ...others.map(([model, p]) => `${model}: ${pacedText(p)}`)].filter(Boolean).join("; ");
}

const CIRCUIT = { closed: "", open: ", down: its items skip it", half_open: ", probing after an outage" };

const DEPLOYMENT = { open: "down", half_open: "probing" };

/** A pool's deployments whose circuit is not closed (none: nothing said). */
function deploymentsText(deployments) {
  const out = (deployments ?? []).filter((d) => d.circuit !== "closed").map((d) => `deployment ${d.deployment} ${DEPLOYMENT[d.circuit] ?? d.circuit}`);
  return out.length > 0 ? ` [${out.join(", ")}]` : "";
}

/** A job with fallbacks or on a pool: its model and each fallback in order, the items each answered, a circuit (or a pool's deployment) that is not closed. */
export function modelsText(models) {
  return models.map((m) => `${m.model}: ${num(m.answered)} answered${CIRCUIT[m.circuit] ?? ` (${m.circuit})`}${deploymentsText(m.deployments)}`).join(" → ");
}
