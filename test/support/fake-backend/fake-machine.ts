// The API side of a test-only backend: a machine kind and its cluster kind,
// defined with the same helpers a real backend's file under
// infra/api/infrastructure.banlieue.io/ uses. It lives only in tests.
import { fixedField, growOnlySize } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/fixed-once-created.js';
import { defineClusterKinds } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/infra-cluster.js';
import {
  defineMachineKinds,
  machineSpecFields,
  machineSpecValidations,
  machineStatusFields,
} from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/infra-machine.js';
import { defineBackendApi } from '../../../infra/api/backend-api.js';
import { Ipam, MacAddress } from '../../../infra/api/addressing.js';
import { InterfaceName } from '../../../infra/api/names.js';
import type { ObjectOf } from '../../../infra/api/kind.js';
import { Type, type Static } from '../../../infra/api/schema.js';

export const FakeMachineSpec = Type.Object(
  {
    ...machineSpecFields('fake://<UUID>'),
    image: Type.String({ description: 'Image to boot.', minLength: 1 }),
    cpus: Type.Integer({ description: 'Virtual CPUs.', minimum: 1 }),
    memoryMiB: Type.Integer({ description: 'Memory in MiB.', minimum: 128 }),
    osDiskSizeGiB: Type.Optional(Type.Integer({ description: 'OS disk size in GiB.', minimum: 1, maximum: 65536 })),
    network: Type.Optional(
      Type.Array(Type.Object({ name: InterfaceName('Interface name in the guest.'), macAddress: Type.Optional(MacAddress()), ipam: Type.Optional(Ipam) }), {
        description: 'Network interfaces, addressed as a real backend addresses its NICs.',
        maxItems: 4,
      }),
    ),
  },
  { description: 'Desired state of the fake VM.', ...machineSpecValidations() },
);

export const FakeMachineStatus = Type.Object(
  { ...machineStatusFields, vmRef: Type.Optional(Type.String({ description: 'The fake VM.' })) },
  { description: 'Observed state of the fake VM.' },
);

export const { machine: FakeMachineKind, template: FakeMachineTemplateKind } = defineMachineKinds({
  kind: 'FakeMachine',
  shortName: 'fkm',
  backend: 'fake',
  spec: FakeMachineSpec,
  status: FakeMachineStatus,
  nicsField: 'network',
  // As a real backend's: the image is booted once, and a disk only grows, once the VM was created.
  fixedOnceCreated: [fixedField('image', 'image a VM boots'), growOnlySize('osDiskSizeGiB')],
});
export const { cluster: FakeClusterKind, template: FakeClusterTemplateKind } = defineClusterKinds('Fake', 'fkc', 'fake');

export const fakeApi = defineBackendApi({
  name: 'fake',
  title: 'Fake',
  instance: 'a fake cloud',
  providerIDScheme: 'fake',
  machine: FakeMachineKind,
  machineTemplate: FakeMachineTemplateKind,
  cluster: FakeClusterKind,
  clusterTemplate: FakeClusterTemplateKind,
  providerRuns: 'cluster',
  providerRoleBuilt: true,
  egressPorts: [],
  endpoint: { schemes: [{ scheme: 'https', defaultPort: 443 }], example: 'https://fake.example.com', insecureSkipTLSVerify: false },
  credentials: { secret: 'required', keys: ['token'] },
  classTargetKeys: [],
  targetKinds: [],
  imageSources: { Template: { ref: 'image name' } },
});

export type FakeMachineSpec = Static<typeof FakeMachineSpec>;
export type FakeMachine = ObjectOf<typeof FakeMachineKind>;
