/**
 * Holds the server to its own OpenAPI document: every response an e2e test reads through `call()`
 * (and every event `readSse` parses) is checked against `/openapi.json` — the route and method are
 * documented, the status is one the operation declares, the content type is declared, and the
 * body validates against the declared schema (JSON Schema 2020-12, as OpenAPI 3.1 says). A
 * violation fails the test that met it. `coverage()` tells which operations and statuses ran.
 */
import { Validator, type Schema } from "@cfworker/json-schema";

type Json = Record<string, any>;

export interface Operation {
  id: string;
  method: string;
  template: string;
  pattern: RegExp;
  op: Json;
}

export class OpenApiCheck {
  readonly #doc: Json;
  readonly #operations: Operation[] = [];
  readonly #validators = new Map<string, Validator>();
  /** operationId → the statuses met */
  readonly seen = new Map<string, Set<number>>();

  constructor(doc: Json) {
    this.#doc = doc;
    for (const [template, item] of Object.entries(doc.paths ?? {}) as [string, Json][]) {
      for (const [method, op] of Object.entries(item) as [string, Json][]) {
        const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`);
        this.#operations.push({ id: op.operationId, method: method.toUpperCase(), template, pattern, op });
      }
    }
    // A literal segment beats a parameter (`/webhook-secret/rotate` before a `{…}` path).
    this.#operations.sort((a, b) => (a.template.match(/\{/g)?.length ?? 0) - (b.template.match(/\{/g)?.length ?? 0));
  }

  get operations(): readonly Operation[] {
    return this.#operations;
  }

  /** The problems of one response; none when it is what the document says. */
  response(method: string, url: string, status: number, contentType: string | null, text: string): string[] {
    const path = new URL(url).pathname;
    if (!path.startsWith("/v1/")) return []; // the open routes (/healthz, /openapi.json, /docs, /dash) are not API operations
    const found = this.#operations.find((o) => o.pattern.test(path) && o.method === method);
    const where = `${method} ${path} → ${status}`;
    if (!found) {
      const pathKnown = this.#operations.some((o) => o.pattern.test(path));
      if ((status === 404 && !pathKnown) || (status === 405 && pathKnown)) return []; // no such route / method: the router's own answers
      return [`${where}: no operation in the document`];
    }
    this.seen.set(found.id, (this.seen.get(found.id) ?? new Set<number>()).add(status));
    const declared = found.op.responses?.[String(status)] as Json | undefined;
    if (!declared) return [`${where}: status not declared by ${found.id} (declares ${Object.keys(found.op.responses ?? {}).join(", ")})`];
    const content = declared.content as Record<string, Json> | undefined;
    if (!content) return text === "" ? [] : [`${where}: a body where ${found.id} declares none`];
    const mediaType = (contentType ?? "").split(";")[0].trim().toLowerCase();
    const media = content[mediaType];
    if (!media) return [`${where}: content type ${mediaType || "(none)"} not declared (declares ${Object.keys(content).join(", ")})`];
    if (mediaType !== "application/json") return [];
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return [`${where}: the body is not JSON`];
    }
    return this.#validate(`${found.id} ${status}`, media.schema, body).map((e) => `${where}: ${e}`);
  }

  /** The problems of one parsed SSE event (`{id, event, data}`) against the document's JobEvent. */
  event(event: { id: number; event: string; data: unknown }): string[] {
    return this.#validate("JobEvent", { $ref: "#/components/schemas/JobEvent" }, event).map((e) => `event ${event.event} #${event.id}: ${e}`);
  }

  #validate(key: string, schema: Json, value: unknown): string[] {
    let validator = this.#validators.get(key);
    if (!validator) {
      validator = new Validator({ ...schema, components: this.#doc.components } as Schema, "2020-12", false);
      this.#validators.set(key, validator);
    }
    const result = validator.validate(value);
    if (result.valid) return [];
    // The innermost errors name the field; the outer ones only repeat that a $ref or a property failed.
    const telling = result.errors.filter(
      (e) => !["$ref", "properties", "items", "additionalProperties", "allOf"].includes(e.keyword) || !e.error.includes("schema"),
    );
    return (telling.length > 0 ? telling : result.errors)
      .sort((a, b) => b.instanceLocation.length - a.instanceLocation.length)
      .slice(0, 6)
      .map((e) => `${e.instanceLocation} ${e.error}`);
  }
}

const checks = new Map<string, Promise<OpenApiCheck>>();

/** The check for the server at `base`, its document fetched once. */
export function openApiCheck(base: string): Promise<OpenApiCheck> {
  let check = checks.get(base);
  if (!check) {
    check = fetch(`${base}/openapi.json`).then(async (res) => new OpenApiCheck(await res.json()));
    checks.set(base, check);
  }
  return check;
}

/** Throws with every problem, so the test that met a response the document does not describe fails. */
export function assertConforms(problems: string[]): void {
  if (problems.length > 0) throw new Error(`The response is not what /openapi.json says:\n${problems.join("\n")}`);
}
