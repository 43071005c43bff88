// Runtime validation of banlieue objects against the same schema the CRDs
// carry. It checks the OpenAPI part (types, required, enums, ranges,
// patterns); the CEL rules are enforced by the API server.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { apiVersionOf, objectSchema, type KindDefinition } from './kind.js';
import { ALL_KINDS } from './kinds.js';

// ajv-formats is CommonJS with a default export.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const KUBERNETES_KEYWORDS = [
  'x-kubernetes-validations',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-int-or-string',
  'x-kubernetes-embedded-resource',
];

export interface ValidationIssue {
  /** Field path in kubectl style, e.g. spec.hardware.cpus. */
  readonly field: string;
  readonly message: string;
}

function newAjv(useDefaults: boolean): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: true, strictRequired: false, useDefaults });
  addFormats(ajv);
  ajv.addFormat('int32', true).addFormat('int64', true);
  for (const keyword of KUBERNETES_KEYWORDS) ajv.addKeyword({ keyword, schemaType: ['array', 'string', 'boolean'] });
  return ajv;
}

function toField(instancePath: string): string {
  return instancePath
    .split('/')
    .slice(1)
    .map((seg) => seg.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((acc, seg) => (/^\d+$/.test(seg) ? `${acc}[${seg}]` : acc ? `${acc}.${seg}` : seg), '');
}

function toIssue(err: ErrorObject): ValidationIssue {
  const base = toField(err.instancePath);
  if (err.keyword === 'required') {
    const missing = (err.params as { missingProperty: string }).missingProperty;
    return { field: base ? `${base}.${missing}` : missing, message: 'Required value' };
  }
  if (err.keyword === 'enum') {
    const allowed = (err.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ');
    return { field: base, message: `Unsupported value: supported values: ${allowed}` };
  }
  if (err.keyword === 'additionalProperties') {
    const extra = (err.params as { additionalProperty: string }).additionalProperty;
    // The API server's words under fieldValidation=Strict (kubectl apply's default).
    return { field: base ? `${base}.${extra}` : extra, message: `unknown field "${base ? `${base}.${extra}` : extra}"` };
  }
  return { field: base, message: err.message ?? err.keyword };
}

/**
 * A copy of `schema` where every object with declared properties refuses
 * others, as the API server does with fieldValidation=Strict (it prunes them
 * silently otherwise). Maps (additionalProperties) and
 * x-kubernetes-preserve-unknown-fields nodes keep accepting anything.
 */
function refusingUnknownFields(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(refusingUnknownFields);
  if (!schema || typeof schema !== 'object') return schema;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'properties' && value && typeof value === 'object') {
      copy[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, refusingUnknownFields(sub)]));
    } else {
      // Rules, enums and defaults are values, not schemas.
      copy[key] = ['x-kubernetes-validations', 'enum', 'default', 'example'].includes(key) ? value : refusingUnknownFields(value);
    }
  }
  const open = copy['x-kubernetes-preserve-unknown-fields'] === true || copy.additionalProperties !== undefined;
  if (copy.type === 'object' && copy.properties && !open) copy.additionalProperties = false;
  return copy;
}

export interface BanlieueValidatorOptions {
  /**
   * Refuse fields the schema does not declare, as `kubectl apply` does by
   * default (server-side field validation, Strict).
   * @default false (the API server would prune them)
   */
  readonly refuseUnknownFields?: boolean;
  /**
   * Fill in schema defaults before checking, in the object given, as the API
   * server does when it decodes (a required field with a default is then
   * never missing). The caller passes a copy it may change.
   * @default false
   */
  readonly applyDefaults?: boolean;
}

/** Compiled validators for every banlieue kind. */
export class BanlieueValidator {
  private readonly byKey = new Map<string, ValidateFunction>();

  constructor(kinds: readonly KindDefinition[] = ALL_KINDS, options: BanlieueValidatorOptions = {}) {
    const ajv = newAjv(options.applyDefaults ?? false);
    for (const def of kinds) {
      const schema: unknown = JSON.parse(JSON.stringify(objectSchema(def)));
      this.byKey.set(`${apiVersionOf(def)}/${def.kind}`, ajv.compile((options.refuseUnknownFields ? refusingUnknownFields(schema) : schema) as object));
    }
  }

  /** Whether apiVersion/kind is a banlieue kind. */
  handles(apiVersion: string, kind: string): boolean {
    return this.byKey.has(`${apiVersion}/${kind}`);
  }

  /** Issues with `obj`; empty when it is valid. Unknown kinds are an issue too. */
  validate(obj: unknown): ValidationIssue[] {
    const { apiVersion, kind } = (obj ?? {}) as { apiVersion?: unknown; kind?: unknown };
    const validate = this.byKey.get(`${String(apiVersion)}/${String(kind)}`);
    if (!validate) return [{ field: 'kind', message: `${String(apiVersion)} ${String(kind)} is not a banlieue kind` }];
    if (validate(obj)) return [];
    return (validate.errors ?? []).map(toIssue);
  }
}
