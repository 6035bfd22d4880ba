/**
 * Submission-time checks of an output schema, so a schema that passes submission can be applied
 * to every output: every subschema under every applicator keyword is walked; keyword values have
 * their required types; every regex (`pattern`, `patternProperties` keys) is valid and matchable
 * in linear time; every `$ref` is local and points to something; tuple `items` are refused in
 * draft 2020-12 (where `prefixItems` says it). Problems are `path: message` strings.
 */
import { linearRegexProblem } from "./linear-regexp";

/** The JSON Schema drafts an output schema may say it is (`$schema`): 2020-12 unless draft-07. */
export type SchemaDraft = "2020-12" | "7";

const KNOWN_TYPES = new Set(["object", "array", "string", "number", "integer", "boolean", "null"]);
const SINGLE = [
  "additionalProperties",
  "not",
  "if",
  "then",
  "else",
  "contains",
  "propertyNames",
  "unevaluatedProperties",
  "unevaluatedItems",
  "additionalItems",
];
const MAPS = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];
const LISTS = ["allOf", "anyOf", "oneOf", "prefixItems"];
const NUMBERS = [
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "minLength",
  "maxLength",
  "minItems",
  "maxItems",
  "minProperties",
  "maxProperties",
  "multipleOf",
  "minContains",
  "maxContains",
];

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

function pointerTarget(root: unknown, pointer: string): unknown {
  let node = root;
  for (const raw of pointer.split("/").slice(1)) {
    const key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    if (Array.isArray(node)) node = node[Number(key)];
    else if (isObject(node)) node = node[key];
    else return undefined;
  }
  return node;
}

class SchemaWalker {
  readonly problems: string[] = [];
  readonly #anchors = new Set<string>();
  readonly #refs: { path: string; ref: string }[] = [];

  constructor(
    readonly root: unknown,
    readonly draft: SchemaDraft,
  ) {}

  run(path: string): string[] {
    this.#walk(this.root, path, true);
    for (const { path: at, ref } of this.#refs) this.#checkRef(at, ref);
    return this.problems.slice(0, 50);
  }

  #walk(schema: unknown, path: string, isRoot = false): void {
    if (typeof schema === "boolean") return;
    if (!isObject(schema)) {
      this.problems.push(`${path}: a schema must be an object or a boolean`);
      return;
    }
    const s = schema;
    if (typeof s.$anchor === "string") this.#anchors.add(s.$anchor);
    if (s.$id !== undefined && !isRoot) this.problems.push(`${path}.$id: nested $id is not supported (use $defs and "#/$defs/…" references)`);
    for (const key of ["$ref", "$dynamicRef", "$recursiveRef"]) {
      if (s[key] === undefined) continue;
      if (typeof s[key] !== "string") this.problems.push(`${path}.${key}: must be a string`);
      else this.#refs.push({ path, ref: s[key] as string }); // reported at the schema that holds the reference
    }
    this.#checkKeywords(s, path);
    for (const key of SINGLE) if (s[key] !== undefined) this.#walk(s[key], `${path}.${key}`);
    for (const key of MAPS) this.#walkMap(s, key, path);
    for (const key of LISTS) {
      if (s[key] === undefined) continue;
      const list = s[key];
      if (!Array.isArray(list) || list.length === 0) this.problems.push(`${path}.${key}: must be a non-empty array`);
      else list.forEach((sub, i) => this.#walk(sub, `${path}.${key}[${i}]`));
    }
    this.#walkItems(s, path);
    if (isObject(s.dependencies)) {
      for (const [name, dep] of Object.entries(s.dependencies)) if (!Array.isArray(dep)) this.#walk(dep, `${path}.dependencies.${name}`);
    }
  }

  #walkMap(s: Json, key: string, path: string): void {
    const map = s[key];
    if (map === undefined) return;
    if (!isObject(map)) {
      this.problems.push(`${path}.${key}: must be an object`);
      return;
    }
    for (const [name, sub] of Object.entries(map)) {
      if (key === "patternProperties") {
        const problem = linearRegexProblem(name);
        if (problem) this.problems.push(`${path}.patternProperties.${name}: ${problem}`);
      }
      this.#walk(sub, `${path}.${key}.${name}`);
    }
  }

  #walkItems(s: Json, path: string): void {
    if (s.items === undefined) return;
    if (!Array.isArray(s.items)) return this.#walk(s.items, `${path}.items`);
    if (this.draft !== "7") {
      this.problems.push(
        `${path}.items: in draft 2020-12 \`items\` is one schema; use \`prefixItems\` for a tuple (or "$schema": "http://json-schema.org/draft-07/schema#")`,
      );
      return;
    }
    s.items.forEach((sub, i) => this.#walk(sub, `${path}.items[${i}]`));
  }

  #checkKeywords(s: Json, path: string): void {
    const types = Array.isArray(s.type) ? s.type : s.type === undefined ? [] : [s.type];
    for (const t of types) if (typeof t !== "string" || !KNOWN_TYPES.has(t)) this.problems.push(`${path}.type: unknown type ${JSON.stringify(t)}`);
    if (s.required !== undefined && (!Array.isArray(s.required) || s.required.some((r) => typeof r !== "string"))) {
      this.problems.push(`${path}.required: must be an array of strings`);
    }
    if (s.enum !== undefined && !Array.isArray(s.enum)) this.problems.push(`${path}.enum: must be an array`);
    for (const key of NUMBERS) {
      if (s[key] !== undefined && typeof s[key] !== "number" && !(key.startsWith("exclusive") && typeof s[key] === "boolean")) {
        this.problems.push(`${path}.${key}: must be a number`);
      }
    }
    if (s.pattern !== undefined) {
      const problem = typeof s.pattern === "string" ? linearRegexProblem(s.pattern) : "must be a string";
      if (problem) this.problems.push(`${path}.pattern: ${problem}`);
    }
  }

  #checkRef(path: string, ref: string): void {
    if (!ref.startsWith("#")) {
      this.problems.push(`${path}: only local references ("#/…") are supported, not ${JSON.stringify(ref.slice(0, 200))}`);
      return;
    }
    const fragment = ref.slice(1);
    if (fragment === "" || (fragment.startsWith("/") ? pointerTarget(this.root, fragment) !== undefined : this.#anchors.has(fragment))) return;
    this.problems.push(`${path}: ${JSON.stringify(ref.slice(0, 200))} points to nothing in this schema`);
  }
}

export function schemaProblems(schema: unknown, draft: SchemaDraft, path = "output_schema"): string[] {
  return new SchemaWalker(schema, draft).run(path);
}
