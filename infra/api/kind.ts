// A kind, described once: names, scope, schema and columns. The CRD builder,
// the TypeScript types, the validator and the authoring constructs read it.
import { Type, type Static, type TSchema, type KubeSchemaOptions } from './schema.js';

export const CORE_GROUP = 'banlieue.io';
export const INFRA_GROUP = 'infrastructure.banlieue.io';
export const API_VERSION = 'v1alpha1';

/** CAPI's contract label on infrastructure CRDs: served versions joined by `_`. */
export const CAPI_CONTRACT_LABEL = 'cluster.x-k8s.io/v1beta2';

export interface PrinterColumn {
  readonly name: string;
  readonly type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  readonly jsonPath: string;
  readonly description?: string;
  readonly priority?: number;
}

export interface KindDefinition<Spec extends TSchema = TSchema, Status extends TSchema | undefined = TSchema | undefined> {
  readonly group: typeof CORE_GROUP | typeof INFRA_GROUP;
  readonly version: typeof API_VERSION;
  readonly kind: string;
  /** flect plural of the lower-cased kind: CAPI finds the CRD by it. */
  readonly plural: string;
  /**
   * Each begins with `b`: the plurals are shared with KubeVirt, VM Operator,
   * CAPV, CAPMOX and clusterctl, so the short names must be banlieue's alone
   * (`vm` and `vmi` are KubeVirt's and VM Operator's; docs/coexisting.md).
   */
  readonly shortNames: readonly string[];
  readonly scope: 'Namespaced' | 'Cluster';
  readonly categories: readonly string[];
  /** Shown by `kubectl explain <kind>`. */
  readonly description: string;
  readonly spec: Spec;
  readonly status: Status;
  readonly printerColumns: readonly PrinterColumn[];
  /** Whether the CRD carries CAPI's contract label. */
  readonly capiContract: boolean;
  /** Rules on the whole object (e.g. spec vs metadata). */
  readonly rootValidations?: KubeSchemaOptions['x-kubernetes-validations'];
}

export function defineKind<Spec extends TSchema, Status extends TSchema | undefined>(def: KindDefinition<Spec, Status>): KindDefinition<Spec, Status> {
  if (def.plural !== flectPlural(def.kind.toLowerCase())) {
    throw new Error(`kind ${def.kind}: plural "${def.plural}" is not the flect plural "${flectPlural(def.kind.toLowerCase())}"`);
  }
  return def;
}

export function apiVersionOf(def: Pick<KindDefinition, 'group' | 'version'>): string {
  return `${def.group}/${def.version}`;
}

export function crdName(def: Pick<KindDefinition, 'group' | 'plural'>): string {
  return `${def.plural}.${def.group}`;
}

/**
 * The plural CAPI computes (`flect.Pluralize`) for the lower-cased kinds we
 * define: flect's regular rules. Irregular words (person, child, ...) are not
 * covered; no kind of ours ends in one.
 */
export function flectPlural(word: string): string {
  if (/(s|ss|sh|ch|x|z)$/.test(word)) return `${word}es`;
  if (/[^aeiou]y$/.test(word)) return `${word.slice(0, -1)}ies`;
  return `${word}s`;
}

/** The wire object of a kind: what `kubectl get -o json` shows. */
export interface KubeObject<Spec, Status> {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec: Spec;
  status?: Status;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
}

export type ObjectOf<D> =
  D extends KindDefinition<infer Spec, infer Status> ? KubeObject<Static<Spec>, Status extends TSchema ? Static<Status> : never> : never;

/** The openAPIV3Schema of a whole object of this kind. */
export function objectSchema(def: KindDefinition): TSchema {
  const properties: Record<string, TSchema> = {
    apiVersion: Type.Optional(Type.String({ description: 'APIVersion of this representation of the object.' })),
    kind: Type.Optional(Type.String({ description: 'Kind of the object.' })),
    // The API server refuses anything but `type: object` here (metadata is implicit).
    metadata: Type.Optional(Type.Unsafe<Record<string, unknown>>({ type: 'object' })),
    spec: def.spec,
  };
  if (def.status) properties.status = Type.Optional(def.status);
  return Type.Object(properties, {
    description: def.description,
    ...(def.rootValidations ? { 'x-kubernetes-validations': def.rootValidations } : {}),
  });
}
