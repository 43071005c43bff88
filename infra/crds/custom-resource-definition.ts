// CRDs from the kind definitions: the schema is used as is, so the CRD, the
// TypeScript types and the validator can never disagree.
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { CAPI_CONTRACT_LABEL, crdName, objectSchema, type KindDefinition } from '../api/kind.js';
import { ALL_KINDS } from '../api/kinds.js';
import { APP_NAME, Label } from '../api/well-known.js';
import { clusterScoped } from '../install/cluster-scoped.js';

/** Plain JSON of a schema: drops TypeBox's symbol keys. */
export function toPlainSchema(schema: unknown): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
}

export interface CustomResourceDefinitionManifest {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; labels: Record<string, string> };
  spec: Record<string, unknown>;
}

/** The CRD manifest of one kind. */
export function toCustomResourceDefinition(def: KindDefinition): CustomResourceDefinitionManifest {
  const labels: Record<string, string> = { [Label.name]: APP_NAME, [Label.partOf]: APP_NAME };
  // CAPI reads the served versions of a contract kind from this label.
  if (def.capiContract) labels[CAPI_CONTRACT_LABEL] = def.version;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: crdName(def), labels },
    spec: {
      group: def.group,
      names: {
        kind: def.kind,
        listKind: `${def.kind}List`,
        plural: def.plural,
        singular: def.kind.toLowerCase(),
        shortNames: [...def.shortNames],
        categories: [...def.categories],
      },
      scope: def.scope,
      versions: [
        {
          name: def.version,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: toPlainSchema(objectSchema(def)) },
          ...(def.status ? { subresources: { status: {} } } : {}),
          additionalPrinterColumns: def.printerColumns.map((c) => ({ ...c })),
        },
      ],
    },
  };
}

/** Every banlieue CRD, as cdk8s objects. */
export class BanlieueCustomResourceDefinitions extends Construct {
  constructor(scope: Construct, id: string) {
    super(scope, id);
    for (const def of ALL_KINDS) {
      const crd = toCustomResourceDefinition(def);
      // A raw ApiObject keeps the x-kubernetes-* keys that typed constructs drop.
      clusterScoped(new ApiObject(this, def.kind, crd));
    }
  }
}
