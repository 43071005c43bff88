// SOAP 1.1 envelopes for vim25: requests are built from plain objects by
// fast-xml-parser's builder (which escapes every text and attribute value), and
// responses are split into a method response or a fault.
import { XMLBuilder } from 'fast-xml-parser';
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

/** `<Envelope><Body><method xmlns="urn:vim25">…fields…</method></Body></Envelope>` as text. */
export function encodeRequest(method: string, fields: XmlFields): string {
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

export type SoapResponse =
  | { readonly kind: 'result'; readonly body: XmlElement }
  | { readonly kind: 'fault'; readonly fault: XmlElement };

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
