/**
 * Binomial confidence bounds, for the guarantees of cascades and evaluations (#50, #51): from k
 * successes in n trials, bounds on the true rate p that hold with a stated confidence.
 * - Clopper–Pearson ("exact"): the bounds are quantiles of Beta distributions, so the coverage is
 *   at least the confidence for every p — conservative, never optimistic.
 * - Wilson score: closer to the nominal coverage on average, for intervals shown to people.
 * The Beta quantile is found by bisection on the regularized incomplete beta function (Lentz's
 * continued fraction): pure, deterministic, a bounded number of steps.
 */

const EPS = 1e-14;
const MAX_FRACTION_TERMS = 300;
const BISECTION_STEPS = 100;

/** ln Γ(x) for x > 0 (Lanczos, g = 7, n = 9): about 15 significant digits. */
export function logGamma(x: number): number {
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905, -0.13857109526572012,
    9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  const z = x - 1;
  let a = c[0] as number;
  const t = z + 7.5;
  for (let i = 1; i < 9; i++) a += (c[i] as number) / (z + i);
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
}

/** The continued fraction of the incomplete beta function (modified Lentz). */
function betaFraction(x: number, a: number, b: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  if (Math.abs(d) < tiny) d = tiny;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= MAX_FRACTION_TERMS; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const step = d * c;
    h *= step;
    if (Math.abs(step - 1) < EPS) break;
  }
  return h;
}

/** The regularized incomplete beta function I_x(a, b), for a, b > 0 and 0 ≤ x ≤ 1. */
export function incompleteBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log(1 - x));
  return x < (a + 1) / (a + b + 2) ? (front * betaFraction(x, a, b)) / a : 1 - (front * betaFraction(1 - x, b, a)) / b;
}

/** The q-quantile of Beta(a, b): the x with I_x(a, b) = q (bisection: BISECTION_STEPS halvings). */
export function betaQuantile(q: number, a: number, b: number): number {
  let lo = 0;
  let hi = 1;
  for (let i = 0; i < BISECTION_STEPS; i++) {
    const mid = (lo + hi) / 2;
    if (incompleteBeta(mid, a, b) < q) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

function checkCounts(successes: number, trials: number, confidence: number): void {
  if (!Number.isInteger(successes) || !Number.isInteger(trials) || successes < 0 || trials < 0 || successes > trials)
    throw new RangeError(`counts must be integers with 0 ≤ successes ≤ trials (got ${successes} of ${trials})`);
  if (!(confidence > 0 && confidence < 1)) throw new RangeError(`confidence must be between 0 and 1 (got ${confidence})`);
}

/** The one-sided Clopper–Pearson lower bound on p: P(p ≥ bound) ≥ confidence. 0 for no success (or no trial). */
export function clopperPearsonLower(successes: number, trials: number, confidence: number): number {
  checkCounts(successes, trials, confidence);
  if (successes === 0) return 0;
  return betaQuantile(1 - confidence, successes, trials - successes + 1);
}

/** The one-sided Clopper–Pearson upper bound on p: P(p ≤ bound) ≥ confidence. 1 when every trial succeeded (or none was made). */
export function clopperPearsonUpper(successes: number, trials: number, confidence: number): number {
  checkCounts(successes, trials, confidence);
  if (successes === trials) return 1;
  return betaQuantile(confidence, successes + 1, trials - successes);
}

/** The two-sided Clopper–Pearson interval at `confidence` (each side at (1 + confidence) / 2). */
export function clopperPearsonInterval(successes: number, trials: number, confidence: number): [number, number] {
  const side = (1 + confidence) / 2;
  return [clopperPearsonLower(successes, trials, side), clopperPearsonUpper(successes, trials, side)];
}

/** The standard normal quantile (Acklam's rational approximation): relative error below 1.2e-9. */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`p must be between 0 and 1 (got ${p})`);
  const a = [-3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1, 2.506628277459239];
  const b = [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
  const c = [-7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
  const poly = (k: number[], x: number) => k.reduce((acc, v) => acc * x + v, 0);
  let x: number;
  if (p < 0.02425) {
    const q = Math.sqrt(-2 * Math.log(p));
    x = poly(c, q) / (poly(d, q) * q + 1);
  } else if (p > 1 - 0.02425) {
    const q = Math.sqrt(-2 * Math.log(1 - p));
    x = -poly(c, q) / (poly(d, q) * q + 1);
  } else {
    const q = p - 0.5;
    const r = q * q;
    x = (poly(a, r) * q) / (poly(b, r) * r + 1);
  }
  return x;
}

/** The two-sided Wilson score interval at `confidence`. [0, 1] with no trial. */
export function wilsonInterval(successes: number, trials: number, confidence: number): [number, number] {
  checkCounts(successes, trials, confidence);
  return trials === 0 ? [0, 1] : wilsonAround(successes / trials, trials, confidence);
}

/** The Wilson interval around an observed share `p` of `trials` (a share of halves: a tie counted half a win). */
export function wilsonAround(p: number, trials: number, confidence: number): [number, number] {
  if (!(p >= 0 && p <= 1) || !Number.isInteger(trials) || trials <= 0)
    throw new RangeError(`a share in [0, 1] of a positive count of trials (got ${p} of ${trials})`);
  if (!(confidence > 0 && confidence < 1)) throw new RangeError(`confidence must be between 0 and 1 (got ${confidence})`);
  const z = normalQuantile((1 + confidence) / 2);
  const z2n = (z * z) / trials;
  const centre = (p + z2n / 2) / (1 + z2n);
  const half = (z / (1 + z2n)) * Math.sqrt((p * (1 - p)) / trials + z2n / (4 * trials));
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}
