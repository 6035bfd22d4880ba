/**
 * Two lists of companies for the join tests, spelled apart and meant alike: each name carries the
 * fake's `emb=` directive (texts of one name embed alike, test/fake-model/embeddings.ts), and a
 * predicate whose scripted answer is a match exactly when the two share an `id`.
 */
const json = (value: unknown) => `json:${encodeURIComponent(JSON.stringify(value))}`;

export const COMPANIES_LEFT = [
  { id: "ibm", name: "IBM <<fake emb=ibm>>" },
  { id: "acme", name: "Acme <<fake emb=acme>>" },
  { id: "none", name: "Initech <<fake emb=initech>>" },
];

export const COMPANIES_RIGHT = [
  { id: "acme", name: "ACME Incorporated <<fake emb=acme>>" },
  { id: "ibm", name: "International Business Machines <<fake emb=ibm>>" },
  { id: "globex", name: "Globex <<fake emb=globex>>" },
];

/** A predicate the fake answers `match: true` for a pair sharing an id (requests counted under `tag`). */
export const sameIdPredicate = (tag: string) =>
  `Same company? {{ left.id }} / {{ right.id }} <<fake tag=${tag} id={{ left.id }}-{{ right.id }} steps={{ '${json({ match: true, reason: "same" })}' if left.id == right.id else '${json({ match: false, reason: "no" })}' }}>>`;

/** The (left, right) pairs of the two lists that share an id: IBM's and Acme's. */
export const SAME_ID_PAIRS: [number, number][] = [
  [0, 1],
  [1, 0],
];
