// PVE's parameter and answer check, after PVE::JSONSchema (validate,
// check_object, check_prop, check_type, parse_property_string), driven by the
// schema file. Requests are checked as PVE checks them (every value a form
// string, converted by type); answers as JSON, so the simulator cannot answer
// what PVE's schema does not describe. Errors are keyed by parameter path with
// PVE's wording, as the 400 body's `errors` carries them.
import type { PveSchema } from '../../support/proxmox/apidata.js';
import { checkNamedFormat, hasNamedFormat, PROPERTY_STRING_FORMATS, uncheckedFormats } from './pve-formats.js';

export type Errors = Record<string, string>;
/** `form`: request parameters, strings; `json`: an answer, typed JSON. */
export type Mode = 'form' | 'json';

const isOptional = (schema: PveSchema): boolean => schema.optional === 1 || schema.optional === true;
const allowsAdditional = (schema: PveSchema): boolean => schema.additionalProperties === 1 || schema.additionalProperties === true;

/** Highest index of `net[n]`-style keys PVE accepts: "(n is 0 to N)" in the description, else qemu-server's limits. */
const INDEX_LIMITS: Readonly<Record<string, number>> = {
  net: 31,
  ipconfig: 31,
  scsi: 30,
  ide: 3,
  sata: 5,
  virtio: 15,
  unused: 255,
  hostpci: 15,
  serial: 3,
  parallel: 2,
  usb: 13,
  numa: 7,
  virtiofs: 9,
};

/** The schema of `key` among `properties`: itself or its `prefix[n]` family. */
export function propertyFor(properties: Readonly<Record<string, PveSchema>>, key: string): PveSchema | undefined {
  const own = properties[key];
  if (own) return own;
  const indexed = /^([a-z]+)(\d+)$/.exec(key);
  if (!indexed?.[1]) return undefined;
  const family = properties[`${indexed[1]}[n]`];
  if (!family) return undefined;
  const stated = /\(n is 0 to (\d+)\)/.exec(family.description ?? '')?.[1];
  const limit = stated !== undefined ? Number(stated) : (INDEX_LIMITS[indexed[1]] ?? 255);
  return Number(indexed[2]) <= limit ? family : undefined;
}

/** Validates parameters (form mode) or an object answer; returns the converted value and the errors. */
export function checkObject(value: Record<string, unknown>, schema: PveSchema, mode: Mode, path = ''): { value: Record<string, unknown>; errors: Errors } {
  const errors: Errors = {};
  const converted = objectInto(value, schema.properties ?? {}, allowsAdditional(schema), mode, path, errors);
  return { value: converted, errors };
}

/** Validates any answer against a `returns` schema. */
export function checkValue(value: unknown, schema: PveSchema, mode: Mode): Errors {
  const errors: Errors = {};
  checkProp(value, schema, '', mode, errors);
  return errors;
}

function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

function objectInto(
  value: Record<string, unknown>,
  properties: Readonly<Record<string, PveSchema>>,
  additional: boolean,
  mode: Mode,
  path: string,
  errors: Errors,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, schema] of Object.entries(properties)) {
    if (key.endsWith('[n]') || schema.alias !== undefined) continue;
    if (value[key] === undefined) {
      if (!isOptional(schema) && schema.type !== 'null') errors[join(path, key)] = 'property is missing and it is not optional';
    }
  }
  for (const [key, item] of Object.entries(value)) {
    const schema = propertyFor(properties, key);
    const where = join(path, key);
    if (!schema) {
      if (!additional) errors[where] = 'property is not defined in schema and the schema does not allow additional properties';
      else out[key] = item;
      continue;
    }
    if (item === undefined) continue;
    out[key] = checkProp(item, schema, where, mode, errors);
    if (schema.requires !== undefined && value[schema.requires] === undefined) {
      errors[join(path, schema.requires)] = `missing property - '${where}' requires this property`;
    }
  }
  return out;
}

/** check_prop: type first, then format, pattern, lengths, range and enum on scalars. Returns the converted value. */
function checkProp(value: unknown, schema: PveSchema, path: string, mode: Mode, errors: Errors): unknown {
  if (value === null || value === undefined) {
    if (schema.type === 'null' || (mode === 'json' && isOptional(schema))) return value;
    errors[path] = 'property is missing and it is not optional';
    return value;
  }
  if (schema.oneOf) return oneOf(value, schema.oneOf, path, mode, errors);
  const typed = checkType(value, schema.type, path, mode, errors);
  if (typed === INVALID) return value;
  if (Array.isArray(typed)) return schema.items ? typed.map((item, i) => checkProp(item, schema.items as PveSchema, `${path}[${i}]`, mode, errors)) : typed;
  if (typeof typed === 'object' && typed !== null) {
    if (!schema.properties) return typed;
    return objectInto(typed as Record<string, unknown>, schema.properties, allowsAdditional(schema), mode, path, errors);
  }
  const error = checkScalar(String(typed), schema, path, mode);
  if (error) errors[path] = error;
  return typed;
}

function oneOf(value: unknown, alternatives: readonly PveSchema[], path: string, mode: Mode, errors: Errors): unknown {
  for (const alternative of alternatives) {
    const own: Errors = {};
    const converted = checkProp(value, alternative, path, mode, own);
    if (Object.keys(own).length === 0) return converted;
  }
  errors[path] = 'value does not match any of the allowed alternatives (oneOf)';
  return value;
}

const INVALID = Symbol('invalid');
const INTEGER = /^\s*[+-]?\d+\s*$/;
const NUMBER = /^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$/;

/** check_type. Form strings become numbers and 1/0; JSON must already be of the type (booleans as 1/0 too, as PVE sends them). */
function checkType(value: unknown, type: string | undefined, path: string, mode: Mode, errors: Errors): unknown {
  const fail = (): typeof INVALID => {
    errors[path] =
      `type check ('${type ?? 'string'}') failed - got ${typeof value === 'object' ? (Array.isArray(value) ? 'ARRAY' : 'HASH') : `'${String(value)}'`}`;
    return INVALID;
  };
  switch (type ?? 'string') {
    case 'object':
      return typeof value === 'object' && !Array.isArray(value) ? value : fail();
    case 'array':
      if (Array.isArray(value)) return value;
      return mode === 'form' ? [value] : fail();
    case 'string':
      if (typeof value === 'string') return value;
      // Perl stringifies any scalar; JSON answers must say what the schema says.
      return mode === 'form' && (typeof value === 'number' || typeof value === 'boolean') ? String(value) : fail();
    case 'integer':
      if (mode === 'json') return Number.isInteger(value) ? value : fail();
      return typeof value === 'string' && INTEGER.test(value) ? Number(value) : fail();
    case 'number':
      if (mode === 'json') return typeof value === 'number' && Number.isFinite(value) ? value : fail();
      return typeof value === 'string' && NUMBER.test(value) ? Number(value) : fail();
    case 'boolean':
      if (mode === 'json') return value === true || value === false || value === 0 || value === 1 ? (value === true || value === 1 ? 1 : 0) : fail();
      if (typeof value === 'string' && /^(1|on|yes|true)$/i.test(value)) return 1;
      if (typeof value === 'string' && /^(0|off|no|false)$/i.test(value)) return 0;
      return fail();
    case 'null':
      return fail();
    default:
      return value;
  }
}

function checkScalar(value: string, schema: PveSchema, path: string, mode: Mode): string | undefined {
  if (schema.format !== undefined) {
    const error =
      typeof schema.format === 'string' ? checkFormat(schema.format, value, schema.typetext) : propertyStringError(schema.format, value, path, mode);
    if (error) return `invalid format - ${error}`;
  }
  if (schema.pattern !== undefined) {
    const pattern = compilePattern(schema.pattern);
    if (pattern && !pattern.test(value)) return 'value does not match the regex pattern';
  }
  if (schema.maxLength !== undefined && value.length > schema.maxLength) return `value may only be ${schema.maxLength} characters long`;
  if (schema.minLength !== undefined && value.length < schema.minLength) return `value must be at least ${schema.minLength} characters long`;
  if (NUMBER.test(value)) {
    if (schema.maximum !== undefined && Number(value) > Number(schema.maximum)) return `value must have a maximum value of ${schema.maximum}`;
    if (schema.minimum !== undefined && Number(value) < Number(schema.minimum)) return `value must have a minimum value of ${schema.minimum}`;
  }
  if (schema.enum && !schema.enum.some((allowed) => String(allowed) === value)) {
    return `value '${value}' does not have a value in the enumeration '${schema.enum.join("', '")}'`;
  }
  return undefined;
}

/** A named format: a simple one (pve-formats.ts), a registered property string, or one known only by its typetext. */
function checkFormat(name: string, value: string, typetext: string | undefined): string | undefined {
  const subKeys = PROPERTY_STRING_FORMATS[name];
  if (subKeys) {
    const parsed = splitPropertyString(value, {});
    if (typeof parsed === 'string') return parsed;
    for (const [key, item] of Object.entries(parsed.values)) {
      const check = subKeys[key];
      if (check === undefined) return `format error\n${key}: property is not defined in schema and the schema does not allow additional properties`;
      if (check === 'boolean' && !/^(1|0|on|off|yes|no|true|false)$/i.test(item)) return `format error\n${key}: type check ('boolean') failed - got '${item}'`;
      const error = typeof check === 'function' ? check(item) : undefined;
      if (error) return `format error\n${key}: ${error}`;
    }
    return undefined;
  }
  if (hasNamedFormat(name)) return checkNamedFormat(name, value);
  // A property string PVE registers in code: its keys are only in the typetext, `[,key=<…>]`, `[key=]<…>` for the default one.
  const keys = typetext ? [...typetext.matchAll(/([a-z0-9_-]+)=\]?</gi)].map((m) => m[1] ?? '') : [];
  if (keys.length === 0) return checkNamedFormat(name, value);
  const parsed = splitPropertyString(value, { defaultKey: /\[([a-z0-9_-]+)=\]</i.exec(typetext ?? '')?.[1] });
  if (typeof parsed === 'string') return parsed;
  const unknown = Object.keys(parsed.values).find((key) => !keys.includes(key));
  return unknown === undefined ? undefined : `format error\n${unknown}: property is not defined in schema and the schema does not allow additional properties`;
}

/** Splits `k=v,k=v,default` (parse_property_string) into raw values. */
function splitPropertyString(
  value: string,
  options: { defaultKey?: string | undefined; format?: Readonly<Record<string, PveSchema>> },
): { values: Record<string, string>; keyAliases: Record<string, string> } | string {
  const values: Record<string, string> = {};
  const keyAliases: Record<string, string> = {};
  for (const part of value.split(',')) {
    if (part === '') continue;
    const kv = /^([^=]+)=(.+)$/.exec(part);
    if (kv?.[1] !== undefined && kv[2] !== undefined) {
      let key = kv[1];
      const schema = options.format?.[key];
      if (schema?.alias !== undefined) {
        if (schema.keyAlias !== undefined) {
          if (keyAliases[schema.keyAlias] !== undefined || values[schema.keyAlias] !== undefined) return `key alias '${schema.keyAlias}' is already defined`;
          keyAliases[schema.keyAlias] = key;
        }
        key = schema.alias;
      }
      if (values[key] !== undefined) return `duplicate key in comma-separated list property: ${key}`;
      values[key] = kv[2];
    } else if (!part.includes('=')) {
      if (options.defaultKey === undefined) return 'value without key, but schema does not define a default key';
      if (values[options.defaultKey] !== undefined) return `duplicate key in comma-separated list property: ${options.defaultKey}`;
      values[options.defaultKey] = part;
    } else {
      return 'missing key in comma-separated list property';
    }
  }
  return { values, keyAliases };
}

/** A nested `format` object (`net[n]`, `scsi[n]`, `memory`…): parse, then check every key as a property. */
function propertyStringError(format: Readonly<Record<string, PveSchema>>, value: string, path: string, mode: Mode): string | undefined {
  const defaultKey = Object.entries(format).find(([, schema]) => schema.default_key === 1 || schema.default_key === true)?.[0];
  const parsed = splitPropertyString(value, { defaultKey, format });
  if (typeof parsed === 'string') return parsed;
  const merged: Record<string, unknown> = { ...parsed.values, ...parsed.keyAliases };
  const unknownKey = Object.keys(parsed.values).find((key) => format[key] === undefined);
  if (unknownKey !== undefined) return `invalid key in comma-separated list property: ${unknownKey}`;
  const errors: Errors = {};
  // Sub-values are strings whichever mode the outer value came in.
  objectInto(merged, format, false, mode === 'json' ? 'form' : mode, path, errors);
  const lines = Object.entries(errors).map(([where, why]) => `${where}: ${why}`);
  return lines.length === 0 ? undefined : `format error\n${lines.join('\n')}`;
}

const patterns = new Map<string, RegExp | undefined>();

/**
 * A Perl pattern of the schema as a JS RegExp, anchored as check_prop does
 * (`m/^$pattern$/`). `(?^:…)` and `(?^i:…)` are Perl's stringified groups;
 * JS has no inline flags before Node 23, so an `i` anywhere makes the whole
 * match case-insensitive (looser, never stricter). Atomic groups become plain ones.
 */
export function compilePattern(pattern: string): RegExp | undefined {
  if (patterns.has(pattern)) return patterns.get(pattern);
  const caseless = /\(\?\^i:/.test(pattern);
  const source = pattern.replace(/\(\?\^i?:/g, '(?:').replace(/\(\?>/g, '(?:');
  let compiled: RegExp | undefined;
  try {
    compiled = new RegExp(`^(?:${source})$`, caseless ? 'i' : '');
  } catch {
    uncheckedFormats.add(`pattern ${pattern}`);
    compiled = undefined;
  }
  patterns.set(pattern, compiled);
  return compiled;
}
