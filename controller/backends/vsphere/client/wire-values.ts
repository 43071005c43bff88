// Mapping between vim25 primitives and XML: the request side builds XmlFields,
// the response side reads XmlElements. Decoders throw a plain Error when the
// server sends something the schema does not allow (a protocol bug, not a fault).
import type { XmlFields, XmlValue } from './soap-envelope.js';
import type { ManagedObjectReference } from './vim-types.js';
import type { XmlElement } from './xml-element.js';

/** `<name type="VirtualMachine">vm-1</name>` */
export function moRefFields(ref: ManagedObjectReference): XmlFields {
  return { '@_type': ref.type, '#text': ref.value };
}

/** A polymorphic value: the element gets `xsi:type`. */
export function typedFields(xsiType: string, fields: XmlFields): XmlFields {
  return { '@_xsi:type': xsiType, ...fields };
}

/** An element holding a ManagedObjectReference. */
export function toMoRef(element: XmlElement): ManagedObjectReference {
  const type = element.attribute('type');
  if (type === undefined || element.text === '') {
    throw new Error(`<${element.name}> is not a ManagedObjectReference`);
  }
  return { type, value: element.text };
}

/** A required child holding a ManagedObjectReference. */
export function childMoRef(parent: XmlElement, name: string): ManagedObjectReference {
  const child = parent.child(name);
  if (child === undefined) throw new Error(`<${parent.name}> has no <${name}>`);
  return toMoRef(child);
}

/** An `ArrayOfManagedObjectReference` value. */
export function toMoRefs(element: XmlElement | undefined): ManagedObjectReference[] {
  return (element?.childrenNamed('ManagedObjectReference') ?? []).map(toMoRef);
}

export function toBoolean(element: XmlElement | undefined): boolean | undefined {
  if (element === undefined) return undefined;
  if (element.text === 'true' || element.text === '1') return true;
  if (element.text === 'false' || element.text === '0') return false;
  throw new Error(`<${element.name}> is not a boolean: "${element.text}"`);
}

/** xsd:int / xsd:long. vim25 longs (bytes) stay below 2^53 in practice. */
export function toNumber(element: XmlElement | undefined): number | undefined {
  if (element === undefined) return undefined;
  const n = Number(element.text);
  if (element.text.trim() === '' || !Number.isFinite(n)) {
    throw new Error(`<${element.name}> is not a number: "${element.text}"`);
  }
  return n;
}

/**
 * A read element back into request fields, e.g. to send a device read from
 * `config.hardware.device` in an edit spec. Keeps `type` and `xsi:type`, drops
 * namespace declarations; repeated children become arrays (vim25 sequences
 * never interleave names, so grouping keeps the order).
 */
export function elementToFields(element: XmlElement): XmlFields {
  const fields: Record<string, XmlValue> = {};
  if (element.xsiType !== undefined) fields['@_xsi:type'] = element.xsiType;
  const moRefType = element.attribute('type');
  if (moRefType !== undefined) fields['@_type'] = moRefType;
  if (element.children.length === 0) {
    fields['#text'] = element.text;
    return fields;
  }
  const groups = new Map<string, XmlValue[]>();
  for (const child of element.children) {
    const value = isPlainText(child) ? child.text : elementToFields(child);
    const group = groups.get(child.name);
    if (group === undefined) groups.set(child.name, [value]);
    else group.push(value);
  }
  for (const [name, values] of groups) fields[name] = values.length === 1 ? values[0] : values;
  return fields;
}

function isPlainText(element: XmlElement): boolean {
  return element.children.length === 0 && element.xsiType === undefined && element.attribute('type') === undefined;
}

/** A map key for a managed object reference: `type:value`. */
export function refKey(ref: ManagedObjectReference): string {
  return `${ref.type}:${ref.value}`;
}
