/**
 * Counts before parses: a body's widest array or object and its depth (JSON), and an XML task
 * document's depth, elements and attributes, are found by one linear scan before any parser or
 * validator runs — so a 30 MB body of millions of members is refused in milliseconds, not
 * parsed for seconds — and every XML failure is a message for 400 `invalid_xml`.
 */
import { describe, expect, test } from "vitest";
import { jsonShape, MAX_JSON_DEPTH, MAX_JSON_MEMBERS } from "../../src/lib/json-depth";
import { MAX_XML_ATTRIBUTES, MAX_XML_DEPTH, MAX_XML_ELEMENTS, readXml, xmlShape } from "../../src/operators/pipeline/xml";
import { pipelineFromXml } from "../../src/operators/pipeline/from-xml";
import { InputError } from "../../src/lib/errors";
import { timed } from "./timed";

const SCAN_MS = 1_000; // a scan of 30 MB measures ~0.1 s here
// Building a 30 MB body takes seconds of wall time on a busy machine (6.7 s beside two suites):
// the bound that matters is the scan's CPU time (`timed`), not vitest's 5 s per test.
const BUILDS_A_BODY = { timeout: 60_000 };

describe("JSON bodies", () => {
  test.each([
    ["[]", { depth: 1, widest: 0 }],
    ["[1]", { depth: 1, widest: 1 }],
    ['{"a": [1, 2, 3], "b": {"c": "x,y]"}}', { depth: 2, widest: 3 }],
    ['[[], [[]], ""]', { depth: 3, widest: 3 }],
    ['["\\"[", {}, [1,2]]', { depth: 2, widest: 3 }],
  ])("%s", (text, shape) => {
    expect(jsonShape(text)).toEqual(shape);
  });

  test("10 million {} items (30 MB) are refused by the scan, not parsed", BUILDS_A_BODY, () => {
    const text = `{"inputs": [${"{},".repeat(10_000_000)}{}], "prompt_template": "{{ item }}"}`;
    const { value, ms } = timed(() => jsonShape(text));
    expect(value.widest).toBeGreaterThan(MAX_JSON_MEMBERS);
    expect(ms).toBeLessThan(SCAN_MS);
  });

  test("a 1.9-million-key inputs object is refused by the scan", BUILDS_A_BODY, () => {
    const keys = Array.from({ length: 1_900_000 }, (_, i) => `"k${i}":1`).join(",");
    const { value, ms } = timed(() => jsonShape(`{"inputs": {${keys}}}`));
    expect(value.widest).toBeGreaterThan(MAX_JSON_MEMBERS);
    expect(ms).toBeLessThan(SCAN_MS);
  });

  test("depth stops the scan early", () => {
    expect(jsonShape("[".repeat(1_000_000)).depth).toBe(MAX_JSON_DEPTH + 1);
  });
});

describe("XML task documents", () => {
  test("a 31 MB document of 2.5 million attributes is refused before the validator", BUILDS_A_BODY, () => {
    const attributes = Array.from({ length: 2_500 }, (_, i) => `a${i}="xxxxxxxx"`).join(" ");
    const text = `<task>${`<input ${attributes}/>`.repeat(1_000)}</task>`;
    expect(text.length).toBeGreaterThan(30_000_000);
    const { value, ms } = timed(() => readXml(text));
    expect(value).toEqual({ ok: false, message: `more than ${MAX_XML_ATTRIBUTES} attributes` });
    expect(ms).toBeLessThan(SCAN_MS);
  });

  test("elements are counted", () => {
    expect(readXml(`<task>${"<x/>".repeat(MAX_XML_ELEMENTS + 1)}</task>`)).toEqual({ ok: false, message: `more than ${MAX_XML_ELEMENTS} elements` });
  });

  test("a '>' or '/>' inside a quoted attribute value does not hide nesting from the depth scan", () => {
    const text = `${'<a b="/>">'.repeat(5_000)}${"</a>".repeat(5_000)}`;
    expect(xmlShape(text).depth).toBe(MAX_XML_DEPTH + 1);
    expect(readXml(text)).toEqual({ ok: false, message: `elements nest more than ${MAX_XML_DEPTH} deep` });
  });

  test.each(["&#x110000;", "&#xD800;", "&#0;", "&#9999999;"])("the character reference %s is invalid_xml, not a crash", (reference) => {
    const read = readXml(`<task type="atomic"><prompt>x ${reference}</prompt></task>`);
    expect(read.ok).toBe(false);
  });

  test("JSON inside the document obeys the JSON bodies' depth bound", () => {
    const deep = `${"[".repeat(3_000)}${"]".repeat(3_000)}`;
    const read = readXml(`<task type="sequential"><inputs><input name="x">${deep}</input></inputs><steps></steps></task>`);
    expect(read.ok).toBe(true);
    if (!read.ok) return;
    expect(() => pipelineFromXml(read.root, {})).toThrow(InputError);
    expect(() => pipelineFromXml(read.root, {})).toThrow(/nests more than 64 levels/);
  });
});
