/** The e2e suite's response check finds each kind of violation (so a passing suite means something). */
import { describe, expect, it } from "vitest";
import { OpenApiCheck } from "../e2e/harness/openapi-check.ts";

const json = (ref: string) => ({ content: { "application/json": { schema: { $ref: `#/components/schemas/${ref}` } } }, description: "" });
const DOC = {
  paths: {
    "/v1/jobs/{job_id}": {
      get: { operationId: "getJob", responses: { 200: json("Job"), 404: json("Error") } },
      delete: { operationId: "deleteJob", responses: { 204: { description: "" } } },
    },
    "/v1/jobs/{job_id}/events": {
      get: { operationId: "streamJobEvents", responses: { 200: { content: { "text/event-stream": { schema: { type: "string" } } }, description: "" } } },
    },
  },
  components: {
    schemas: {
      Job: { type: "object", properties: { id: { type: "string" }, total: { type: "integer" } }, required: ["id", "total"] },
      Error: { type: "object", properties: { error: { type: "object" } }, required: ["error"] },
      JobEvent: { type: "object", properties: { id: { type: "integer" }, event: { enum: ["MAP_STARTED"] } }, required: ["id", "event"] },
    },
  },
};
const URL_ = "http://h/v1/jobs/job_1";
const JSON_TYPE = "application/json; charset=UTF-8";

describe("OpenApiCheck", () => {
  const check = new OpenApiCheck(DOC);

  it("passes a response the document describes, and records it", () => {
    expect(check.response("GET", URL_, 200, JSON_TYPE, '{"id":"job_1","total":3}')).toEqual([]);
    expect(check.response("DELETE", URL_, 204, null, "")).toEqual([]);
    expect(check.seen.get("getJob")).toEqual(new Set([200]));
  });

  it("finds a missing required field and a wrong type, naming the field", () => {
    const problems = check.response("GET", URL_, 200, JSON_TYPE, '{"id":7}');
    expect(problems.join("\n")).toMatch(/total/);
    expect(problems.join("\n")).toMatch(/\/id/);
  });

  it("finds an undeclared status, content type, an unexpected body and an undocumented route", () => {
    expect(check.response("GET", URL_, 409, JSON_TYPE, "{}")[0]).toMatch(/status not declared by getJob/);
    expect(check.response("GET", URL_, 200, "text/plain", "hi")[0]).toMatch(/content type text\/plain not declared/);
    expect(check.response("DELETE", URL_, 204, "application/json", "{}")[0]).toMatch(/a body where deleteJob declares none/);
    expect(check.response("POST", "http://h/v1/jobs/job_1/events", 200, JSON_TYPE, "{}")[0]).toMatch(/no operation in the document/);
    expect(check.response("GET", URL_, 200, JSON_TYPE, "not json")[0]).toMatch(/not JSON/);
  });

  it("lets the router's own 404 and 405 through, and the open routes", () => {
    expect(check.response("GET", "http://h/v1/nothing", 404, JSON_TYPE, "{}")).toEqual([]);
    expect(check.response("PUT", URL_, 405, JSON_TYPE, "{}")).toEqual([]);
    expect(check.response("GET", "http://h/healthz", 200, JSON_TYPE, "{}")).toEqual([]);
  });

  it("checks a stream's events against JobEvent", () => {
    expect(check.event({ id: 1, event: "MAP_STARTED", data: {} })).toEqual([]);
    expect(check.event({ id: 1, event: "NOT_AN_EVENT", data: {} })[0]).toMatch(/event NOT_AN_EVENT #1: .*event/);
  });
});
