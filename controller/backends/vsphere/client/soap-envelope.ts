// SOAP 1.1 envelopes for vim25: requests are built from plain objects by
// fast-xml-parser's builder (which escapes every text and attribute value), and
// responses are split into a method response or a fault.
//
// Escaping is not enough for every string: XML 1.0 (§2.2 Char) cannot carry
// the C0 control characters but tab, LF and CR, nor U+FFFE, U+FFFF or a lone
// surrogate, not even as character references. Sent raw they make the request
// invalid XML, so a request holding one is refused before it is
// sent, naming the field, never the value (a password goes through here too).
import { XMLBuilder } from 'fast-xml-parser';
import { BackendError, BackendErrorKind } from '../../backend-error.js';
import { parseXml, type XmlElement } from './xml-element.js';

/**
 * A request value. Object keys are element names in XSD sequence order (vim25
 * is order-sensitive); `@_type` / `@_xsi:type` are attributes, `#text` the text;
 * an array repeats the element; `undefined` omits it.
 */
export type XmlValue = string | number | boolean | XmlFields | readonly XmlValue[] | undefined;
export interface XmlFields {
  readonly [name: string]: XmlValue;
}

const SOAP_ENV = 'http://schemas.xmlsoap.org/soap/envelope/';

const builder = new XMLBuilder({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  textNodeName: '#text',
  suppressEmptyNode: false,
  processEntities: true,
});

/**
 * `<Envelope><Body><method xmlns="urn:vim25">…fields…</method></Body></Envelope>` as text.
 * Throws BackendError Rejected for a string XML 1.0 cannot carry.
 */
export function encodeRequest(method: string, fields: XmlFields): string {
  assertXmlChars(fields, method);
  const envelope = {
    'soapenv:Envelope': {
      '@_xmlns:soapenv': SOAP_ENV,
      '@_xmlns:xsd': 'http://www.w3.org/2001/XMLSchema',
      '@_xmlns:xsi': 'http://www.w3.org/2001/XMLSchema-instance',
      'soapenv:Body': { [method]: { '@_xmlns': 'urn:vim25', ...fields } },
    },
  };
  return '<?xml version="1.0" encoding="UTF-8"?>' + builder.build(envelope);
}

// Outside XML 1.0's Char production; the `u` flag reads surrogate pairs as one code point.
const NOT_XML_CHAR = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

/** Throws Rejected at the first string of `value` (at `path`, e.g. `CloneVM_Task.name`) holding a character XML 1.0 cannot carry. */
function assertXmlChars(value: XmlValue, path: string): void {
  if (typeof value === 'string') {
    const bad = NOT_XML_CHAR.exec(value);
    if (bad) {
      const code = `U+${(bad[0].codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
      throw new BackendError(
        BackendErrorKind.Rejected,
        `${path} holds ${code} at position ${bad.index}, a character XML 1.0 cannot carry: refused before it reaches vCenter`,
      );
    }
  } else if (Array.isArray(value)) {
    (value as readonly XmlValue[]).forEach((item, i) => assertXmlChars(item, `${path}[${i}]`));
  } else if (typeof value === 'object') {
    // `#text` is the element's own text, `@_x` its attribute x.
    for (const [name, item] of Object.entries(value)) assertXmlChars(item, name === '#text' ? path : `${path}.${name.replace(/^@_/, '@')}`);
  }
}

export type SoapResponse = { readonly kind: 'result'; readonly body: XmlElement } | { readonly kind: 'fault'; readonly fault: XmlElement };

/**
 * The `<methodResponse>` element, or the `<Fault>`. Throws when the document is
 * not a SOAP envelope (e.g. an HTML error page from a proxy).
 */
export function decodeResponse(xml: string): SoapResponse {
  const envelope = parseXml(xml);
  const body = envelope.name === 'Envelope' ? envelope.child('Body') : undefined;
  const first = body?.children[0];
  if (first === undefined) throw new Error(`not a SOAP response (root element <${envelope.name}>)`);
  return first.name === 'Fault' ? { kind: 'fault', fault: first } : { kind: 'result', body: first };
}
