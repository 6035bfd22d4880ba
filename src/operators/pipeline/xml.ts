/**
 * Reads the reference spec's XML task format into an ordered tree (element order matters: steps
 * run in document order). A pipeline is then built from the tree (the pipeline operator).
 * `fast-xml-parser` (pinned; no code generation, checked in workerd by the integration tests)
 * validates and parses. Hostile input is bounded: no DOCTYPE (so no entity expansion), nesting,
 * elements and attributes counted by a scan before the validator and the parser run, entities
 * decoded by hand (a reference to no character is `invalid_xml`).
 */
import { XMLParser, XMLValidator } from "fast-xml-parser";

export interface XmlElement {
  tag: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  text: string; // the element's own text, trimmed (not its children's)
}

export type XmlRead = { ok: true; root: XmlElement } | { ok: false; message: string };

export const MAX_XML_DEPTH = 64; // like the JSON bodies' nesting bound

const ENTITIES: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" };

/** A character reference's character: XML's Char production (no NUL, no surrogates, at most U+10FFFF). */
function character(code: number, reference: string): string {
  const allowed =
    code === 0x9 ||
    code === 0xa ||
    code === 0xd ||
    (code >= 0x20 && code <= 0xd7ff) ||
    (code >= 0xe000 && code <= 0xfffd) ||
    (code >= 0x10000 && code <= 0x10ffff);
  if (!allowed) throw new Error(`the character reference ${reference} is not a character XML allows`);
  return String.fromCodePoint(code);
}

function decode(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]{1,6}|#[0-9]{1,7}|[a-z]+);/g, (whole, name: string) => {
    if (name.startsWith("#x")) return character(Number.parseInt(name.slice(2), 16), whole);
    if (name.startsWith("#")) return character(Number.parseInt(name.slice(1), 10), whole);
    return ENTITIES[name] ?? whole;
  });
}

/** Elements and attributes a task document may hold: far above a pipeline of 10,000 items, far below what takes the parser seconds. */
export const MAX_XML_ELEMENTS = 50_000;
export const MAX_XML_ATTRIBUTES = 50_000;

export interface XmlShape {
  depth: number;
  elements: number;
  attributes: number;
}

/**
 * The deepest element nesting and the counts of elements and attributes, by one linear scan
 * (comments, CDATA and processing instructions skipped; a `>` or `/>` inside a quoted attribute
 * value is text), stopping once a bound is passed. Runs before the validator and the parser.
 */
export function xmlShape(text: string): XmlShape {
  const shape: XmlShape = { depth: 0, elements: 0, attributes: 0 };
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] !== "<") continue;
    let end: number;
    if (text.startsWith("<!--", i)) end = text.indexOf("-->", i + 4) + 2;
    else if (text.startsWith("<![CDATA[", i)) end = text.indexOf("]]>", i + 9) + 2;
    else if (text[i + 1] === "?" || text[i + 1] === "!") end = text.indexOf(">", i);
    else if (text[i + 1] === "/") {
      depth--;
      end = text.indexOf(">", i);
    } else {
      let quote = "";
      let attributes = 0;
      for (end = i + 1; end < text.length; end++) {
        const ch = text[end] as string;
        if (quote) {
          if (ch === quote) quote = "";
        } else if (ch === '"' || ch === "'") quote = ch;
        else if (ch === "=") attributes++;
        else if (ch === ">") break;
      }
      if (end >= text.length) break;
      shape.elements++;
      shape.attributes += attributes;
      if (text[end - 1] !== "/") shape.depth = Math.max(shape.depth, ++depth);
      if (shape.depth > MAX_XML_DEPTH || shape.elements > MAX_XML_ELEMENTS || shape.attributes > MAX_XML_ATTRIBUTES) break;
    }
    if (end < i) break; // unterminated: the validator says where
    i = end;
  }
  return shape;
}

/** The first bound the document passes, or null. */
function shapeProblem(shape: XmlShape): string | null {
  if (shape.depth > MAX_XML_DEPTH) return `elements nest more than ${MAX_XML_DEPTH} deep`;
  if (shape.elements > MAX_XML_ELEMENTS) return `more than ${MAX_XML_ELEMENTS} elements`;
  if (shape.attributes > MAX_XML_ATTRIBUTES) return `more than ${MAX_XML_ATTRIBUTES} attributes`;
  return null;
}

type Ordered = Record<string, unknown> & { ":@"?: Record<string, string> };

function toElement(tag: string, node: Ordered): XmlElement {
  const children: XmlElement[] = [];
  let text = "";
  for (const child of (node[tag] as Ordered[] | undefined) ?? []) {
    if ("#text" in child) {
      text += String(child["#text"]);
      continue;
    }
    const childTag = Object.keys(child).find((k) => k !== ":@");
    if (childTag) children.push(toElement(childTag, child));
  }
  const attributes = Object.fromEntries(Object.entries(node[":@"] ?? {}).map(([k, v]) => [k, decode(String(v))]));
  return { tag, attributes, children, text: decode(text).trim() };
}

/** Reads a task document; every failure, the parser's own included, is a message for 400 `invalid_xml`. */
export function readXml(text: string): XmlRead {
  try {
    return read(text);
  } catch (err) {
    // The validator, the parser and the entity decoder all read only the document: whatever they throw is its fault.
    return { ok: false, message: err instanceof Error ? err.message : String(err) };
  }
}

function read(text: string): XmlRead {
  if (/<!DOCTYPE/i.test(text)) return { ok: false, message: "a DOCTYPE is not accepted" };
  const problem = shapeProblem(xmlShape(text));
  if (problem) return { ok: false, message: problem };
  const valid = XMLValidator.validate(text);
  if (valid !== true) return { ok: false, message: `${valid.err.msg} (line ${valid.err.line}, column ${valid.err.col})` };
  const parser = new XMLParser({
    preserveOrder: true,
    ignoreAttributes: false,
    attributeNamePrefix: "",
    parseAttributeValue: false,
    parseTagValue: false,
    processEntities: false,
    htmlEntities: false,
    trimValues: false,
    commentPropName: false,
  });
  const nodes = parser.parse(text) as Ordered[];
  const roots = nodes.filter((n) => !("#text" in n) && !Object.keys(n).some((k) => k.startsWith("?")));
  if (roots.length !== 1) return { ok: false, message: `expected one root element, found ${roots.length}` };
  const root = roots[0] as Ordered;
  const tag = Object.keys(root).find((k) => k !== ":@") as string;
  return { ok: true, root: toElement(tag, root) };
}
