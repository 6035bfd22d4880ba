/**
 * The XML task format's reader inside workerd (fast-xml-parser must run there without code
 * generation): the reference spec's own documents are read into ordered trees; malformed and
 * hostile documents are refused with a reason.
 */
import { describe, expect, it } from "vitest";
import { readXml, type XmlElement } from "../../src/operators/pipeline/xml";
import sequential from "../fixtures/pipeline-xml/sequential.xml?raw";
import reduce from "../fixtures/pipeline-xml/reduce.xml?raw";

const child = (e: XmlElement, tag: string) => e.children.find((c) => c.tag === tag);

describe("the XML task format, read in workerd", () => {
  it("reads the spec's sequential example in document order", () => {
    const read = readXml(sequential);
    if (!read.ok) throw new Error(read.message);
    const root = read.root;
    expect(root).toMatchObject({ tag: "task", attributes: { type: "sequential" } });
    expect(child(root, "description")?.text).toBe("Analyze {{dataset_name}} using provided configuration");
    expect(child(root, "context_management")?.children.map((c) => [c.tag, c.text])).toEqual([
      ["inherit_context", "none"],
      ["accumulate_data", "true"],
      ["accumulation_format", "notes_only"],
    ]);
    const steps = child(root, "steps")?.children ?? [];
    expect(steps.map((s) => child(s, "description")?.text)).toEqual(["Load initial data", "Apply configuration from {{config_profile}}"]);
    expect(child(steps[0] as XmlElement, "inputs")?.children[0]).toMatchObject({ tag: "input", attributes: { name: "data", from: "raw_data" } });
  });

  it("reads the spec's reduce example, comments skipped, named inputs in order", () => {
    const read = readXml(reduce);
    if (!read.ok) throw new Error(read.message);
    const inputs = child(read.root, "inputs")?.children ?? [];
    expect(inputs.map((i) => [i.attributes.name, i.text])).toEqual([
      ["dataset1", "Value 1"],
      ["dataset2", "Value 2"],
      ["dataset3", "Value 3"],
    ]);
    const metadata = child(child(read.root, "inner_task") as XmlElement, "inputs")?.children[1];
    expect(child(metadata as XmlElement, "task")?.children[0]).toMatchObject({ tag: "description", text: "Load metadata for processing" });
    expect(child(read.root, "initial_value")?.text).toBe("");
  });

  it("decodes entities by hand and refuses malformed, DOCTYPE and too deep documents", () => {
    const read = readXml('<task model="a&amp;b"><description>x &lt; y &#38; {{ z }}</description></task>');
    expect(read.ok && read.root.attributes.model).toBe("a&b");
    expect(read.ok && read.root.children[0]?.text).toBe("x < y & {{ z }}");
    expect(readXml("<task><description>open</task>")).toMatchObject({ ok: false });
    expect(readXml('<!DOCTYPE t [<!ENTITY a "aaaa">]><task>&a;</task>')).toEqual({ ok: false, message: "a DOCTYPE is not accepted" });
    expect(readXml(`${"<a>".repeat(65)}${"</a>".repeat(65)}`)).toEqual({ ok: false, message: "elements nest more than 64 deep" });
    expect(readXml("<a/><b/>")).toMatchObject({ ok: false });
    const deep = `${"<a>".repeat(100_000)}${"</a>".repeat(100_000)}`;
    const started = Date.now();
    expect(readXml(deep).ok).toBe(false);
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
