// A parsed XML element with namespace-aware attribute lookup, and the parser
// that produces it. Responses are read through this small tree, never through
// fast-xml-parser's own output shape, so every caller sees one typed model.
import { XMLParser } from 'fast-xml-parser';

const XSI_NAMESPACE = 'http://www.w3.org/2001/XMLSchema-instance';

/** One element: local name, attributes by qualified name, text, child elements in order. */
export class XmlElement {
  constructor(
    /** Local name (prefix stripped): vim25 names are unique without their namespace. */
    readonly name: string,
    /** Attributes by qualified name as written, e.g. `type`, `xsi:type`. */
    readonly attributes: Readonly<Record<string, string>>,
    /** Concatenated character data of this element (not of its children). */
    readonly text: string,
    readonly children: readonly XmlElement[],
    /**
     * The `xsi:type` attribute's value, found by namespace, not by prefix: vcsim
     * (Go's encoding/xml) writes `_XMLSchema-instance:type`, vCenter `xsi:type`.
     */
    readonly xsiType: string | undefined,
  ) {}

  /** First child with this local name. */
  child(name: string): XmlElement | undefined {
    return this.children.find((c) => c.name === name);
  }

  /** All children with this local name, in document order. */
  childrenNamed(name: string): XmlElement[] {
    return this.children.filter((c) => c.name === name);
  }

  /** Text of the first child with this local name. */
  childText(name: string): string | undefined {
    return this.child(name)?.text;
  }

  attribute(name: string): string | undefined {
    return this.attributes[name];
  }
}

// fast-xml-parser's preserveOrder output: [{tag: [children], ':@': {attrs}}, {'#text': '…'}].
type OrderedNode = Record<string, unknown>;

// XML 1.0's own references only (§4.1, §4.6): the five predefined entities and
// numeric character references. fast-xml-parser decodes numeric ones only in
// its HTML mode, yet Go's encoding/xml (vcsim) writes ' and " as &#39; &#34;.
// Entities a DOCTYPE declares are never expanded (no entity-expansion attacks).
const PREDEFINED: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
const REFERENCE = /&(?:#x([0-9a-fA-F]+)|#([0-9]+)|(amp|lt|gt|quot|apos));/g;

function decodeReferences(text: string): string {
  return text.replace(REFERENCE, (whole, hex: string | undefined, decimal: string | undefined, name: string | undefined) => {
    if (name !== undefined) return PREDEFINED[name] ?? whole;
    const code = hex !== undefined ? parseInt(hex, 16) : Number(decimal);
    return code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}

const xml10Entities = {
  decode: decodeReferences,
  reset: (): void => {},
  setXmlVersion: (): void => {},
  setExternalEntities: (): void => {},
  addInputEntities: (): void => {},
};

const parser = new XMLParser({
  entityDecoder: xml10Entities,
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  // Everything stays a string: vim25 longs, UUIDs and keys must not become numbers.
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
});

/** Parses a document and returns its root element. Throws on malformed XML. */
export function parseXml(xml: string): XmlElement {
  const nodes = parser.parse(xml) as unknown;
  const root = Array.isArray(nodes) ? nodes.find(isElementNode) : undefined;
  if (root === undefined) throw new Error('XML document has no root element');
  return toElement(root, new Map([['xml', 'http://www.w3.org/XML/1998/namespace']]));
}

function isElementNode(node: unknown): node is OrderedNode {
  return typeof node === 'object' && node !== null && Object.keys(node).some((k) => k !== ':@' && k !== '#text');
}

function toElement(node: OrderedNode, inherited: ReadonlyMap<string, string>): XmlElement {
  const qname = Object.keys(node).find((k) => k !== ':@');
  if (qname === undefined) throw new Error('XML element without a name');
  const attributes = toAttributes(node[':@']);
  const namespaces = new Map(inherited);
  for (const [name, value] of Object.entries(attributes)) {
    if (name.startsWith('xmlns:')) namespaces.set(name.slice('xmlns:'.length), value);
  }
  let text = '';
  const children: XmlElement[] = [];
  const content = node[qname];
  for (const child of Array.isArray(content) ? content : []) {
    if (typeof child !== 'object' || child === null) continue;
    const record = child as OrderedNode;
    if ('#text' in record) text += String(record['#text']);
    else if (isElementNode(record)) children.push(toElement(record, namespaces));
  }
  return new XmlElement(localName(qname), attributes, text, children, findXsiType(attributes, namespaces));
}

function toAttributes(raw: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof raw !== 'object' || raw === null) return out;
  for (const [name, value] of Object.entries(raw)) out[name] = String(value);
  return out;
}

function findXsiType(attributes: Record<string, string>, namespaces: ReadonlyMap<string, string>): string | undefined {
  for (const [name, value] of Object.entries(attributes)) {
    const colon = name.indexOf(':');
    if (colon > 0 && name.slice(colon + 1) === 'type' && namespaces.get(name.slice(0, colon)) === XSI_NAMESPACE) {
      return value;
    }
  }
  return undefined;
}

/** `xsd:string` → `string`, `soapenv:Body` → `Body`. */
export function localName(qualified: string): string {
  const colon = qualified.indexOf(':');
  return colon < 0 ? qualified : qualified.slice(colon + 1);
}
