// Schema building blocks. Every kind is written once with these: the same
// object is the CRD's openAPIV3Schema, the TypeScript type (Static<>) and the
// runtime validator's input (docs/adr/0001-schema-source-of-truth.md).
//
// TypeBox's own Union/Literal/Record emit anyOf/const/patternProperties, which
// Kubernetes structural schemas refuse; the helpers below emit the
// Kubernetes-compatible form and keep the static type.
import { Type, type TSchema, type TUnsafe, type SchemaOptions } from '@sinclair/typebox';

export { Type, type Static, type TSchema, type TObject, type TOptional, type TProperties } from '@sinclair/typebox';

/** One CEL rule as Kubernetes stores it in `x-kubernetes-validations`. */
export interface CelRule {
  readonly rule: string;
  readonly message: string;
  /** JSONPath of the field the message is about, relative to the node carrying the rule. */
  readonly fieldPath?: string;
  readonly reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
}

/** Options accepted on any node, including the Kubernetes extensions. */
export interface KubeSchemaOptions extends SchemaOptions {
  readonly 'x-kubernetes-validations'?: readonly CelRule[];
  readonly 'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  readonly 'x-kubernetes-list-map-keys'?: readonly string[];
  readonly 'x-kubernetes-map-type'?: 'atomic' | 'granular';
  readonly 'x-kubernetes-preserve-unknown-fields'?: boolean;
}

/** A string restricted to `values`; typed as their union. */
export function StringEnum<const T extends readonly string[]>(values: T, options: KubeSchemaOptions & { default?: T[number] } = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/** `map[string]string`: labels, raw attributes, capability targets. */
export function StringMap(options: KubeSchemaOptions = {}): TUnsafe<Record<string, string>> {
  return Type.Unsafe<Record<string, string>>({
    type: 'object',
    additionalProperties: { type: 'string' },
    ...options,
  });
}

/** A list of objects merged by key when several writers apply to it (SSA list-map). */
export function ListMap<T extends TSchema>(item: T, keys: readonly string[], options: KubeSchemaOptions = {}): ReturnType<typeof Type.Array<T>> {
  return Type.Array(item, {
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-list-map-keys': [...keys],
    ...options,
  });
}

/** A list of unique scalars. */
export function ListSet<T extends TSchema>(item: T, options: KubeSchemaOptions = {}): ReturnType<typeof Type.Array<T>> {
  return Type.Array(item, { 'x-kubernetes-list-type': 'set', ...options });
}

/** A Kubernetes object name (DNS-1123 subdomain). */
export function Name(description: string, options: KubeSchemaOptions = {}): ReturnType<typeof Type.String> {
  return Type.String({ description, minLength: 1, maxLength: 253, ...options });
}

/** A resource.Quantity-free integer size in GiB. */
export function SizeGiB(description: string, options: KubeSchemaOptions = {}): ReturnType<typeof Type.Integer> {
  return Type.Integer({ description, minimum: 1, maximum: 65536, ...options });
}

/** RFC 3339 timestamp, as metav1.Time serialises. */
export function Timestamp(description: string): ReturnType<typeof Type.String> {
  return Type.String({ description, format: 'date-time' });
}
