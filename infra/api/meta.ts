// Kubernetes shapes every kind uses: references to objects and keys, label selectors,
// conditions, observedGeneration, and a CA bundle from one source.
import { ListMap, ListSet, Name, StringEnum, StringMap, Timestamp, Type, type Static } from './schema.js';

export const LocalObjectReference = Type.Object(
  { name: Name('Name of the referenced object.') },
  { description: 'Reference to an object by name.', 'x-kubernetes-map-type': 'atomic' },
);
export type LocalObjectReference = Static<typeof LocalObjectReference>;

/** A key in a Secret or ConfigMap of the referring object's namespace. */
// Return type inferred on purpose: it carries the static shape.
export function KeySelector(defaultKey: string, what: string) {
  return Type.Object(
    {
      name: Name(`Name of the ${what} in the same namespace.`),
      key: Type.Optional(Type.String({ description: `Key within the ${what}.`, default: defaultKey, minLength: 1, maxLength: 253 })),
    },
    { description: `A key of a ${what} in the same namespace.`, 'x-kubernetes-map-type': 'atomic' },
  );
}
export type KeySelector = Static<ReturnType<typeof KeySelector>>;

export const LabelSelectorRequirement = Type.Object(
  {
    key: Type.String({ description: 'Label key the selector applies to.', minLength: 1, maxLength: 317 }),
    operator: StringEnum(['In', 'NotIn', 'Exists', 'DoesNotExist'] as const, {
      description: 'Relationship of the key to the values: In, NotIn, Exists, DoesNotExist.',
    }),
    values: Type.Optional(
      ListSet(Type.String({ maxLength: 63 }), {
        description: 'Values for In and NotIn; must be empty for Exists and DoesNotExist.',
        maxItems: 64,
      }),
    ),
  },
  {
    description: 'A label selector requirement.',
    'x-kubernetes-validations': [
      {
        rule: "self.operator in ['In', 'NotIn'] ? (has(self.values) && size(self.values) > 0) : (!has(self.values) || size(self.values) == 0)",
        message: 'values must be non-empty for In and NotIn and empty for Exists and DoesNotExist',
        fieldPath: '.values',
      },
    ],
  },
);

export const LabelSelector = Type.Object(
  {
    matchLabels: Type.Optional(StringMap({ description: 'Labels that must all be present with these values.' })),
    matchExpressions: Type.Optional(Type.Array(LabelSelectorRequirement, { description: 'Requirements that must all hold.', maxItems: 32 })),
  },
  {
    description: 'A Kubernetes label selector; an empty selector matches everything.',
    'x-kubernetes-map-type': 'atomic',
  },
);
export type LabelSelector = Static<typeof LabelSelector>;

export const ConditionStatusValues = ['True', 'False', 'Unknown'] as const;

/** metav1.Condition, as CAPI v1beta2 uses it. */
export const Condition = Type.Object(
  {
    type: Type.String({
      description: 'Type of condition in CamelCase, e.g. Ready.',
      minLength: 1,
      maxLength: 316,
      pattern: '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
    }),
    status: StringEnum(ConditionStatusValues, { description: 'Status of the condition: True, False or Unknown.' }),
    observedGeneration: Type.Optional(Type.Integer({ description: 'metadata.generation the condition was computed from.', minimum: 0, format: 'int64' })),
    lastTransitionTime: Timestamp('Last time the condition changed status.'),
    reason: Type.String({
      description: 'CamelCase reason for the last transition.',
      minLength: 1,
      maxLength: 1024,
      pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$',
    }),
    message: Type.String({ description: 'Human-readable details; never contains credentials.', maxLength: 32768 }),
  },
  { description: 'Observation of one aspect of the object.' },
);
export type Condition = Static<typeof Condition>;

export function Conditions(): ReturnType<typeof ListMap<typeof Condition>> {
  return ListMap(Condition, ['type'], {
    description: 'Conditions (CAPI v1beta2 shape), one per type; each writer owns its own types.',
    maxItems: 32,
  });
}

export function ObservedGeneration(): ReturnType<typeof Type.Integer> {
  return Type.Integer({
    description: 'metadata.generation last reconciled successfully.',
    minimum: 0,
    format: 'int64',
  });
}

/** Exactly one source of PEM CA certificates (ADR-0008 upstream). */
export const CABundleSource = Type.Object(
  {
    inline: Type.Optional(Type.String({ description: 'PEM-encoded CA certificates.', minLength: 1, maxLength: 65536 })),
    configMapRef: Type.Optional(KeySelector('ca.crt', 'ConfigMap')),
    secretRef: Type.Optional(KeySelector('ca.crt', 'Secret')),
  },
  {
    description: 'CA certificates that verify the backend endpoint. Exactly one source.',
    'x-kubernetes-validations': [
      {
        rule: '[has(self.inline), has(self.configMapRef), has(self.secretRef)].filter(x, x).size() == 1',
        message: 'exactly one of inline, configMapRef or secretRef must be set',
      },
    ],
  },
);
export type CABundleSource = Static<typeof CABundleSource>;
