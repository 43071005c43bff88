// `banlieue validate --server`: the API server's own verdict, by a dry-run
// create (nothing is stored) with the field validation kubectl apply uses.
import type { KindDefinition } from '../../../infra/api/kind.js';
import { ALL_KINDS } from '../../../infra/api/kinds.js';
import { ApiStatusError, type KubeApi } from '../../runtime/kube-api.js';
import { identityOf, type InputDocument } from './input-document.js';
import { lookupKind } from './kind-lookup.js';
import type { FieldError, Verdict } from './verdict.js';

interface StatusBody {
  message?: string;
  details?: { causes?: { field?: string; message?: string }[] };
}

/** The field errors of a refusal: the Status causes, else the fields its message names. */
export function toFieldErrors(err: ApiStatusError): FieldError[] {
  let body: StatusBody = {};
  try {
    body = JSON.parse(err.body) as StatusBody;
  } catch {
    return [{ field: '', message: err.message }];
  }
  const causes = (body.details?.causes ?? []).filter((c) => c.message !== undefined);
  if (causes.length > 0) return causes.map((c) => ({ field: c.field ?? '', message: c.message ?? '' }));
  // Strict decoding: `strict decoding error: unknown field "spec.x", unknown field "spec.y"`.
  const message = body.message ?? err.message;
  const unknown = [...message.matchAll(/unknown field "([^"]+)"/g)].map((m) => ({ field: m[1] ?? '', message: `unknown field "${m[1] ?? ''}"` }));
  if (unknown.length > 0) return unknown;
  // A type error in metadata fails decoding: `... Go struct field ObjectMeta.name of type string`.
  const decoding = /Go struct field ObjectMeta\.([\w.]+)/.exec(message);
  return [{ field: decoding ? `metadata.${decoding[1] ?? ''}` : '', message }];
}

export class ServerChecker {
  constructor(
    private readonly api: KubeApi,
    /** Namespace of namespaced objects that name none. */
    private readonly namespace: string,
    private readonly kinds: readonly KindDefinition[] = ALL_KINDS,
  ) {}

  async check(doc: InputDocument): Promise<Verdict | undefined> {
    const verdict = (errors: FieldError[]): Verdict => ({
      file: doc.file,
      index: doc.index,
      ...identityOf(doc),
      ok: errors.length === 0,
      errors,
      notCheckedOffline: [],
    });
    if (doc.parseError !== undefined) return verdict([{ field: '', message: `not valid YAML or JSON: ${doc.parseError}` }]);
    if (!doc.object || typeof doc.object !== 'object' || Array.isArray(doc.object)) return verdict([{ field: '', message: 'not an object' }]);
    const obj = doc.object as { apiVersion?: unknown; kind?: unknown; metadata?: unknown };
    // An unknown kind never reaches a collection: say what kubectl would ("no matches for kind"), with a hint.
    const lookup = lookupKind(obj.apiVersion, obj.kind, this.kinds);
    if ('foreign' in lookup) return undefined;
    if ('error' in lookup) return verdict([lookup.error]);
    const meta = (obj.metadata && typeof obj.metadata === 'object' ? obj.metadata : {}) as { namespace?: unknown };
    const namespace = typeof meta.namespace === 'string' && meta.namespace !== '' ? meta.namespace : this.namespace;
    const collection = await this.api.pathOf({ apiVersion: String(obj.apiVersion), kind: String(obj.kind), metadata: { name: '', namespace } });
    try {
      await this.api.request('POST', collection, { query: { dryRun: 'All', fieldValidation: 'Strict' }, body: obj });
      return verdict([]);
    } catch (err) {
      // AlreadyExists comes after validation: the object is valid, it only exists.
      if (err instanceof ApiStatusError && err.code === 409) return verdict([]);
      if (err instanceof ApiStatusError && err.code >= 400 && err.code < 500 && err.code !== 401 && err.code !== 403) return verdict(toFieldErrors(err));
      throw err;
    }
  }
}
