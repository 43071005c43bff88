// The one server-side-apply helper. Every writer applies with its own field
// manager (DESIGN §3), so ownership of each field is visible in managedFields.
//
// Objects a controller writes into a user's namespace are never taken over:
// `create` makes one only where nothing of that name exists, and `update`
// changes only the very object (by uid) the caller has checked is its own,
// without force, so a field another writer set comes back as a conflict for
// the caller to report.
import { ApiStatusError, type KubeApi, type ObjectRef } from './kube-api.js';
import { TransientError } from './errors.js';

/** An object the caller has read and judged its own: the uid makes the write a precondition on exactly that object. */
export interface OwnedRef extends ObjectRef {
  metadata: ObjectRef['metadata'] & { uid: string };
}

/**
 * What `create` found: the object it made, what already had the name (untouched), or the
 * refusal of admission (`invalid`: the API server's words, naming the field and the rule).
 */
export type CreateResult<T> =
  { readonly created: true; readonly object: T } | { readonly created: false; readonly existing: T } | { readonly created: false; readonly invalid: string };

/**
 * What `update` did: applied; refused because another field manager set a field it sets
 * (`conflict`: the API server's words, paths and managers, no values); or refused by admission
 * (`invalid`: the API server's words, naming the field and the rule, e.g. a field that cannot
 * change once the VM was created).
 */
export type UpdateResult<T> =
  | { readonly applied: true; readonly object: T }
  | { readonly applied: false; readonly conflict: string }
  | { readonly applied: false; readonly invalid: string };

/** One entry of metadata.managedFields, as the API server writes it. */
export interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  time?: string;
  fieldsType?: string;
  fieldsV1?: Record<string, unknown>;
  subresource?: string;
}

interface Live extends ObjectRef {
  metadata: ObjectRef['metadata'] & { uid?: string; resourceVersion?: string; managedFields?: ManagedFieldsEntry[] };
}

/** Reads and precondition patches one hand-over may take while others write the object. */
const HAND_OVER_ATTEMPTS = 3;

export class ServerSideApply {
  constructor(
    private readonly api: KubeApi,
    private readonly fieldManager: string,
  ) {}

  /** Apply `desired` as this field manager; force takes over fields another manager set. */
  async apply<T extends ObjectRef>(desired: T, opts: { force?: boolean; dryRun?: boolean; subresource?: 'status' } = {}): Promise<T> {
    return this.api.request<T>('PATCH', await this.api.pathOf(desired, opts.subresource), {
      query: {
        fieldManager: this.fieldManager,
        force: String(opts.force ?? true),
        fieldValidation: 'Strict',
        dryRun: opts.dryRun ? 'All' : undefined,
      },
      body: desired,
      contentType: 'application/apply-patch+yaml',
    });
  }

  /**
   * Create `desired` if nothing of its name exists. A POST: the one write the
   * API server refuses (409 AlreadyExists) rather than merging into an object
   * that is there; an apply would merge. What exists instead is read and
   * returned as it is, for the caller to judge. What is created has its
   * fields under an Update entry of ours; `update` hands them to our apply
   * first (not here: a second write at every create, which races the other
   * controllers that write the new object at once, for a rare update).
   */
  async create<T extends ObjectRef>(desired: T): Promise<CreateResult<T>> {
    const collection = await this.api.pathOf({ ...desired, metadata: { ...desired.metadata, name: '' } });
    let created: (T & Live) | undefined;
    try {
      created = await this.api.request<T & Live>('POST', collection, { query: { fieldManager: this.fieldManager, fieldValidation: 'Strict' }, body: desired });
    } catch (err) {
      if (err instanceof ApiStatusError && err.code === 422) return { created: false, invalid: statusMessage(err) };
      if (!(err instanceof ApiStatusError && statusReason(err) === 'AlreadyExists')) throw err;
    }
    if (created) return { created: true, object: created };
    try {
      return { created: false, existing: await this.api.get<T>(desired) };
    } catch (err) {
      if (err instanceof ApiStatusError && err.code === 404) throw new TransientError(`${nameOf(desired)} was deleted while being created`);
      throw err;
    }
  }

  /**
   * Update the object whose uid `desired` carries by a non-forced apply. The
   * uid is a precondition: an object deleted or replaced since the caller read
   * it is never written (TransientError: read again). A field another manager
   * set is returned as a conflict, never taken over. The fields our `create`
   * wrote are handed to our apply first, so the apply may change or drop them.
   */
  async update<T extends OwnedRef>(desired: T): Promise<UpdateResult<T>> {
    await this.handOverCreated(desired);
    try {
      return { applied: true, object: await this.apply(desired, { force: false }) };
    } catch (err) {
      if (!(err instanceof ApiStatusError)) throw err;
      if (isUidMismatch(err)) throw new TransientError(`${nameOf(desired)} was deleted or replaced since it was read: ${err.message}`);
      if (err.code === 422) return { applied: false, invalid: statusMessage(err) };
      if (!isFieldManagerConflict(err)) throw err;
      return { applied: false, conflict: statusMessage(err) };
    }
  }

  /** Hand over what a create of ours left under its Update entry; another writer changing the object meanwhile means reading it again. */
  private async handOverCreated(desired: OwnedRef): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.handOverCreateEntry(await this.readOwned(desired));
        return;
      } catch (err) {
        if (err instanceof ApiStatusError && err.code === 404) throw new TransientError(`${nameOf(desired)} was deleted since it was read`);
        if (!(err instanceof ApiStatusError && (err.code === 422 || err.code === 409)) || attempt === HAND_OVER_ATTEMPTS) throw err;
      }
    }
  }

  private async readOwned(desired: OwnedRef): Promise<Live> {
    const live = await this.api.get<Live>(desired);
    if (live.metadata.uid !== desired.metadata.uid) throw new TransientError(`${nameOf(desired)} was replaced while being updated`);
    return live;
  }

  /**
   * A POST records its fields under an Update entry of our manager, which a
   * later non-forced apply of a changed value conflicts with, as if another
   * writer had set them. Turn that entry into our apply's (as client-go's
   * csaupgrade does for client-side apply), guarded by the resourceVersion
   * `live` was read at. Whether there was one to hand over.
   */
  private async handOverCreateEntry(live: Live): Promise<boolean> {
    const handed = handedToApply(live.metadata.managedFields ?? [], this.fieldManager);
    if (!handed) return false;
    await this.api.request('PATCH', await this.api.pathOf(live), {
      body: [
        { op: 'test', path: '/metadata/resourceVersion', value: live.metadata.resourceVersion },
        { op: 'replace', path: '/metadata/managedFields', value: handed },
      ],
      contentType: 'application/json-patch+json',
    });
    return true;
  }
}

/**
 * `entries` with `manager`'s Update entry (of the main resource) made its
 * Apply entry, merged into the one it may already have; undefined when it has
 * no such Update entry.
 */
export function handedToApply(entries: readonly ManagedFieldsEntry[], manager: string): ManagedFieldsEntry[] | undefined {
  const isOurs = (e: ManagedFieldsEntry, operation: string): boolean => e.manager === manager && e.operation === operation && !e.subresource;
  const update = entries.find((e) => isOurs(e, 'Update'));
  if (!update) return undefined;
  const apply = entries.find((e) => isOurs(e, 'Apply'));
  const merged: ManagedFieldsEntry = { ...(apply ?? update), operation: 'Apply', fieldsV1: mergeFieldSets(apply?.fieldsV1 ?? {}, update.fieldsV1 ?? {}) };
  return entries.filter((e) => e !== update && e !== apply).concat(merged);
}

/** The union of two FieldsV1 sets: a trie of objects, so a deep merge. */
function mergeFieldSets(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const mine = out[k];
    out[k] = isRecord(mine) && isRecord(v) ? mergeFieldSets(mine, v) : v;
  }
  return out;
}

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

interface StatusBody {
  reason?: string;
  message?: string;
  details?: { causes?: { reason?: string; field?: string }[] };
}

function statusBody(err: ApiStatusError): StatusBody {
  try {
    const parsed: unknown = JSON.parse(err.body);
    return isRecord(parsed) ? (parsed as StatusBody) : {};
  } catch {
    return {};
  }
}

const statusReason = (err: ApiStatusError): string | undefined => statusBody(err).reason;
const statusMessage = (err: ApiStatusError): string => statusBody(err).message ?? err.message;

/** Whether a refused apply names fields another field manager owns (not a failed precondition). */
export function isFieldManagerConflict(err: ApiStatusError): boolean {
  return err.code === 409 && (statusBody(err).details?.causes ?? []).some((c) => c.reason === 'FieldManagerConflict');
}

/**
 * Whether an update was refused for its uid: 409 when nothing of the name
 * exists (the apply would have created it), 422 (metadata.uid is immutable)
 * when another object has the name now.
 */
export function isUidMismatch(err: ApiStatusError): boolean {
  const body = statusBody(err);
  if (err.code === 409) return !isFieldManagerConflict(err);
  return err.code === 422 && (body.details?.causes ?? []).some((c) => c.field === 'metadata.uid');
}

const nameOf = (o: ObjectRef): string => `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name ?? ''}`;
