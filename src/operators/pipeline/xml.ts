/**
 * Reads the reference spec's XML task format into an ordered tree (element order matters: steps
 * run in document order). A pipeline is then built from the tree (the pipeline operator).
 * `fast-xml-parser` (pinned; no code generation, checked in workerd by the integration tests)
 * validates and parses. Hostile input is bounded: no DOCTYPE (so no entity expansion), nesting at
 * most MAX_XML_DEPTH (checked by a scan before the parser recurses), entities decoded by hand.
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

function decode(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]{1,6}|#[0-9]{1,7}|[a-z]+);/g, (whole, name: string) => {
    if (name.startsWith("#x")) return String.fromCodePoint(Number.parseInt(name.slice(2), 16));
    if (name.startsWith("#")) return String.fromCodePoint(Number.parseInt(name.slice(1), 10));
    return ENTITIES[name] ?? whole;
  });
}

/** The deepest element nesting, by a linear scan (comments, CDATA and processing instructions skipped). */
export function xmlDepth(text: string): number {
  let depth = 0;
  let max = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] !== "<") continue;
    if (text.startsWith("<!--", i)) i = Math.max(i, text.indexOf("-->", i + 4));
    else if (text.startsWith("<![CDATA[", i)) i = Math.max(i, text.indexOf("]]>", i + 9));
    else if (text[i + 1] === "?" || text[i + 1] === "!") i = Math.max(i, text.indexOf(">", i));
    else if (text[i + 1] === "/") depth--;
    else {
      const end = text.indexOf(">", i);
      if (end < 0) break;
      if (text[end - 1] !== "/") max = Math.max(max, ++depth);
      i = end;
    }
    if (i < 0) break;
  }
  return max;
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

export function readXml(text: string): XmlRead {
  if (/<!DOCTYPE/i.test(text)) return { ok: false, message: "a DOCTYPE is not accepted" };
  const depth = xmlDepth(text);
  if (depth > MAX_XML_DEPTH) return { ok: false, message: `elements nest ${depth} deep; at most ${MAX_XML_DEPTH}` };
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
