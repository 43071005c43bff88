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

function newAjv(): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: true, strictRequired: false, useDefaults: false });
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
  return { field: base, message: err.message ?? err.keyword };
}

/** Compiled validators for every banlieue kind. */
export class BanlieueValidator {
  private readonly byKey = new Map<string, ValidateFunction>();

  constructor(kinds: readonly KindDefinition[] = ALL_KINDS) {
    const ajv = newAjv();
    for (const def of kinds) {
      this.byKey.set(`${apiVersionOf(def)}/${def.kind}`, ajv.compile(JSON.parse(JSON.stringify(objectSchema(def)))));
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
