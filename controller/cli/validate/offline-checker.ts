// The offline half of `banlieue validate`: what the API server checks on a
// create, derived from the same kind definitions the CRDs are built from.
import { objectSchema, type KindDefinition } from '../../../infra/api/kind.js';
import { ALL_KINDS } from '../../../infra/api/kinds.js';
import { BanlieueValidator } from '../../../infra/api/validator.js';
import { checkCelRules, type CelEngine } from './cel-rules.js';
import { identityOf, type InputDocument } from './input-document.js';
import { lookupKind } from './kind-lookup.js';
import { checkObjectMeta } from './object-meta.js';
import type { FieldError, Verdict } from './verdict.js';

export class OfflineChecker {
  private readonly validator: BanlieueValidator;
  private readonly schemas = new Map<string, unknown>();

  constructor(
    private readonly kinds: readonly KindDefinition[] = ALL_KINDS,
    private readonly cel?: CelEngine,
  ) {
    // kubectl apply validates with fieldValidation=Strict by default: an unknown field is refused, not pruned.
    // The API server fills in defaults when it decodes, before it checks required fields.
    this.validator = new BanlieueValidator(kinds, { refuseUnknownFields: true, applyDefaults: true });
    for (const def of kinds) this.schemas.set(def.kind, JSON.parse(JSON.stringify(objectSchema(def))));
  }

  /** The verdict on one document; undefined for an object of another API group (not ours to judge). */
  check(doc: InputDocument): Verdict | undefined {
    const verdict = (errors: FieldError[], notCheckedOffline: FieldError[] = []): Verdict => ({
      file: doc.file,
      index: doc.index,
      ...identityOf(doc),
      ok: errors.length === 0,
      errors,
      notCheckedOffline: errors.length === 0 ? notCheckedOffline : [],
    });
    if (doc.parseError !== undefined) return verdict([{ field: '', message: `not valid YAML or JSON: ${doc.parseError}` }]);
    if (!doc.object || typeof doc.object !== 'object' || Array.isArray(doc.object)) return verdict([{ field: '', message: 'not an object' }]);
    const obj = doc.object as Record<string, unknown>;
    const lookup = lookupKind(obj.apiVersion, obj.kind, this.kinds);
    if ('foreign' in lookup) return undefined;
    if ('error' in lookup) return verdict([lookup.error]);
    const def = lookup.found;
    // With a status subresource the API server drops status on create before validating.
    const { status: _status, ...created } = obj;
    // A copy: defaults are filled in (see the validator) and the caller's object stays as read.
    const candidate = structuredClone(def.status ? created : obj);
    const errors = [...checkObjectMeta(obj.metadata, def.scope), ...this.validator.validate(candidate)];
    if (errors.length > 0) return verdict(errors);
    const cel = checkCelRules(this.schemas.get(def.kind), candidate, this.cel);
    return verdict(cel.failed, cel.notChecked);
  }
}
