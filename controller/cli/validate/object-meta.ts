// The metadata checks the API server applies to every custom resource
// (apimachinery ValidateObjectMeta): a DNS-1123 subdomain name, no namespace
// on cluster-scoped kinds, well-formed labels and annotations.
import { DNS1123_SUBDOMAIN, LABEL_VALUE, QUALIFIED_NAME_PART } from '../../../infra/api/label-syntax.js';
import type { FieldError } from './verdict.js';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** apimachinery TotalAnnotationSizeLimitB. */
const ANNOTATIONS_MAX_BYTES = 256 * 1024;
const KNOWN_METADATA_FIELDS = new Set([
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
]);

const quote = (v: string): string => JSON.stringify(v.length > 80 ? `${v.slice(0, 80)}...` : v);

function subdomainErrors(field: string, value: string): FieldError[] {
  const errors: FieldError[] = [];
  if (value.length > 253) errors.push({ field, message: `Invalid value: ${quote(value)}: must be no more than 253 characters` });
  if (!DNS1123_SUBDOMAIN.test(value)) {
    errors.push({
      field,
      message: `Invalid value: ${quote(value)}: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character`,
    });
  }
  return errors;
}

function qualifiedNameErrors(field: string, key: string): FieldError[] {
  const slash = key.indexOf('/');
  const [prefix, name] = slash >= 0 ? [key.slice(0, slash), key.slice(slash + 1)] : [undefined, key];
  const errors: FieldError[] = [];
  if (prefix !== undefined) {
    if (prefix.length === 0) errors.push({ field, message: `Invalid value: ${quote(key)}: prefix part must be non-empty` });
    else if (subdomainErrors(field, prefix).length > 0)
      errors.push({ field, message: `Invalid value: ${quote(key)}: prefix part must be a lowercase RFC 1123 subdomain` });
  }
  if (name.length === 0 || name.length > 63 || !QUALIFIED_NAME_PART.test(name)) {
    errors.push({
      field,
      message: `Invalid value: ${quote(key)}: name part must be at most 63 characters of alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric character`,
    });
  }
  return errors;
}

function stringMap(value: unknown): Record<string, unknown> | undefined {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function labelErrors(labels: Record<string, unknown>): FieldError[] {
  return Object.entries(labels).flatMap(([key, value]) => {
    const errors = qualifiedNameErrors('metadata.labels', key);
    const field = `metadata.labels.${key}`;
    if (typeof value !== 'string') return [...errors, { field, message: `Invalid value: must be a string` }];
    if (value.length > 63 || !LABEL_VALUE.test(value)) {
      errors.push({
        field: 'metadata.labels',
        message: `Invalid value: ${quote(value)}: a valid label must be an empty string or at most 63 characters of alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric character`,
      });
    }
    return errors;
  });
}

function annotationErrors(annotations: Record<string, unknown>): FieldError[] {
  const errors = Object.keys(annotations).flatMap((key) => qualifiedNameErrors('metadata.annotations', key));
  let bytes = 0;
  for (const [key, value] of Object.entries(annotations)) {
    if (typeof value !== 'string') errors.push({ field: `metadata.annotations.${key}`, message: 'Invalid value: must be a string' });
    else bytes += Buffer.byteLength(key) + Buffer.byteLength(value);
  }
  if (bytes > ANNOTATIONS_MAX_BYTES) errors.push({ field: 'metadata.annotations', message: `Too long: must have at most ${ANNOTATIONS_MAX_BYTES} bytes` });
  return errors;
}

/** What the API server would say of `metadata` on a create. */
export function checkObjectMeta(metadata: unknown, scope: 'Namespaced' | 'Cluster'): FieldError[] {
  const meta = stringMap(metadata);
  if (!meta) return [{ field: 'metadata', message: 'Required value' }];
  const errors: FieldError[] = Object.keys(meta)
    .filter((key) => !KNOWN_METADATA_FIELDS.has(key))
    .map((key) => ({ field: `metadata.${key}`, message: `unknown field "metadata.${key}"` }));
  const { name, generateName, namespace, labels, annotations } = meta;
  if (name === undefined || name === '') {
    if (typeof generateName !== 'string' || generateName === '')
      errors.push({ field: 'metadata.name', message: 'Required value: name or generateName is required' });
  } else if (typeof name !== 'string') {
    errors.push({ field: 'metadata.name', message: 'Invalid value: must be a string' });
  } else {
    errors.push(...subdomainErrors('metadata.name', name));
  }
  // On a cluster-scoped kind a namespace is dropped, not refused: kubectl and the apiserver both ignore it
  // (a cdk8s Chart with a namespace puts one on every object it holds).
  if (namespace !== undefined && namespace !== '' && scope !== 'Cluster') {
    if (typeof namespace !== 'string' || namespace.length > 63 || !DNS1123_LABEL.test(namespace)) {
      errors.push({
        field: 'metadata.namespace',
        message: `Invalid value: ${quote(String(namespace))}: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'`,
      });
    }
  }
  if (labels !== undefined) {
    const map = stringMap(labels);
    errors.push(...(map ? labelErrors(map) : [{ field: 'metadata.labels', message: 'Invalid value: must be a map of strings' }]));
  }
  if (annotations !== undefined) {
    const map = stringMap(annotations);
    errors.push(...(map ? annotationErrors(map) : [{ field: 'metadata.annotations', message: 'Invalid value: must be a map of strings' }]));
  }
  return errors;
}
