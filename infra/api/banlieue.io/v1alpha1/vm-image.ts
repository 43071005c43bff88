import { Conditions, ObservedGeneration } from '../../meta.js';
import { API_VERSION, CORE_GROUP, defineKind, type ObjectOf } from '../../kind.js';
import { ListMap, Name, StringEnum, Type, type Static } from '../../schema.js';
import { IMAGE_SOURCE_KINDS } from '../../backend-api.js';
import { BACKEND_APIS, BACKENDS } from '../../backends.js';
import { imageSourceBackendDescriptions, imageSourceBackendRules } from './backend-rules.js';

// Field descriptions that list backends, from the backend list.
const DESCRIBED = imageSourceBackendDescriptions(BACKEND_APIS, IMAGE_SOURCE_KINDS);

export const ImageSource = Type.Object(
  {
    providerClass: StringEnum(BACKENDS, { description: 'Backend this source is for; one source per backend.' }),
    kind: StringEnum(IMAGE_SOURCE_KINDS, { description: DESCRIBED.kind }),
    ref: Type.String({ description: 'Template name, VMID, volume name, path or URL.', minLength: 1, maxLength: 2048 }),
    cloneMode: Type.Optional(StringEnum(['Full', 'Linked'] as const, { description: DESCRIBED.cloneMode })),
    checksum: Type.Optional(
      Type.String({
        description:
          'Expected digest of a Url image, as sha256:<hex> or sha512:<hex>. A host that downloads Url images takes none without one, unless its host config opts in (urlImages.allowWithoutChecksum).',
        pattern: '^(sha256:[0-9a-f]{64}|sha512:[0-9a-f]{128})$',
      }),
    ),
  },
  {
    description: 'Where the image comes from on one backend.',
    'x-kubernetes-validations': [
      ...imageSourceBackendRules(BACKEND_APIS),
      {
        rule: "self.kind != 'Url' || self.ref.startsWith('https://') || self.ref.startsWith('http://')",
        message: 'a Url ref must be an http(s) URL',
        fieldPath: '.ref',
      },
      {
        // A VMImage is cluster-wide and read by whoever picks images, and its rows repeat its sources.
        rule: "self.kind != 'Url' || !self.ref.matches('^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*@')",
        message: 'a Url ref must not carry a user or password (user:password@host): every reader of VMImages would read them',
        fieldPath: '.ref',
      },
    ],
  },
);
export type ImageSource = Static<typeof ImageSource>;

export const VMImageSpec = Type.Object(
  {
    osFamily: StringEnum(['linux', 'windows', 'bsd', 'other'] as const, { description: 'Operating system family.' }),
    osDistribution: Type.String({ description: 'Distribution, e.g. ubuntu.', minLength: 1, maxLength: 63 }),
    osVersion: Type.String({ description: 'Distribution version, e.g. 24.04.', minLength: 1, maxLength: 63 }),
    architecture: StringEnum(['amd64', 'arm64'] as const, { description: 'CPU architecture.', default: 'amd64' }),
    guestAgent: Type.Optional(
      StringEnum(['cloud-init', 'ignition', 'sysprep', 'none'] as const, {
        description: 'How the guest consumes user-data.',
        default: 'cloud-init',
      }),
    ),
    sources: ListMap(ImageSource, ['providerClass'], {
      description: 'One source per backend.',
      minItems: 1,
      maxItems: BACKENDS.length,
    }),
  },
  { description: 'An OS image, with one source per backend.' },
);

export const PerProviderImageStatus = Type.Object(
  {
    providerNamespace: Name('Namespace of the Provider.'),
    providerName: Name('Name of the Provider.'),
    ready: Type.Boolean({ description: 'Whether the image is usable on this Provider.' }),
    reason: Type.Optional(Type.String({ description: 'CamelCase reason when not ready.', maxLength: 1024 })),
    message: Type.Optional(Type.String({ description: 'Details when not ready.', maxLength: 32768 })),
    resolvedRef: Type.Optional(Type.String({ description: 'Backend reference of the image (template path, VMID, volume).' })),
    observedGeneration: Type.Optional(ObservedGeneration()),
  },
  { description: 'Readiness of the image on one Provider; each provider applies only its own row.' },
);
export type PerProviderImageStatus = Static<typeof PerProviderImageStatus>;

export const VMImageStatus = Type.Object(
  {
    perProvider: Type.Optional(
      ListMap(PerProviderImageStatus, ['providerNamespace', 'providerName'], {
        description: 'One row per Provider, keyed by Provider namespace and name.',
        maxItems: 512,
      }),
    ),
    conditions: Type.Optional(Conditions()),
    observedGeneration: Type.Optional(ObservedGeneration()),
  },
  { description: 'Observed state of the image.' },
);

export const VMImageKind = defineKind({
  group: CORE_GROUP,
  version: API_VERSION,
  kind: 'VMImage',
  plural: 'vmimages',
  shortNames: ['bvmi'],
  scope: 'Cluster',
  categories: ['banlieue'],
  description: 'A VMImage is an operating-system image, with the source to use on each backend.',
  spec: VMImageSpec,
  status: VMImageStatus,
  printerColumns: [
    { name: 'OS', type: 'string', jsonPath: '.spec.osDistribution' },
    { name: 'Version', type: 'string', jsonPath: '.spec.osVersion' },
    { name: 'Arch', type: 'string', jsonPath: '.spec.architecture' },
    { name: 'Ready', type: 'string', jsonPath: ".status.conditions[?(@.type=='Ready')].status" },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
  capiContract: false,
});

export type VMImageSpec = Static<typeof VMImageSpec>;
export type VMImageStatus = Static<typeof VMImageStatus>;
export type VMImage = ObjectOf<typeof VMImageKind>;
