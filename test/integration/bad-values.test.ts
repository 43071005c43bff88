// Values that parse but cannot work, refused by the real kube-apiserver with a
// message naming the field, where they are written: a VirtualMachine's
// networkOverrides and a machine's interfaces share one static-address schema
// and one MAC schema (infra/api/addressing.ts).
import { describeAdmission, type AdmissionObject as Obj } from '../support/admission-table.js';

const vmWith = (address: Record<string, unknown>): Obj => ({
  apiVersion: 'banlieue.io/v1alpha1',
  kind: 'VirtualMachine',
  metadata: { name: 'vm' },
  spec: { classRef: { name: 'small' }, imageRef: { name: 'ubuntu' }, networkOverrides: [{ name: 'eth0', static: address }] },
});

const machineWith = (nic: Record<string, unknown>): Obj => ({
  apiVersion: 'infrastructure.banlieue.io/v1alpha1',
  kind: 'VSphereMachine',
  metadata: { name: 'vsm' },
  spec: { template: 'ubuntu', numCpus: 2, memoryMiB: 2048, network: [{ name: 'eth0', portGroup: 'VM Network', ...nic }] },
});

/** [what, object, text the API server's message must contain]. */
const refused: [string, Obj, string][] = [
  ['the IPv4 unspecified address', vmWith({ address: '0.0.0.0', prefix: 24 }), 'spec.networkOverrides[0].static.address: Invalid value'],
  ['a loopback address', vmWith({ address: '127.0.0.1', prefix: 8 }), 'must not be an unspecified (0.0.0.0, ::) or loopback'],
  ['the IPv6 loopback address', vmWith({ address: '::1', prefix: 128 }), 'spec.networkOverrides[0].static.address: Invalid value'],
  ['an IPv4 address with prefix 64', vmWith({ address: '192.0.2.5', prefix: 64 }), 'spec.networkOverrides[0].static.prefix: Invalid value'],
  ['an IPv4 address with prefix 99', vmWith({ address: '192.0.2.5', prefix: 99 }), 'prefix must be at most 32 for an IPv4 address'],
  [
    'an IPv6 gateway for an IPv4 address',
    vmWith({ address: '192.0.2.5', prefix: 24, gateway: '2001:db8::1' }),
    'spec.networkOverrides[0].static.gateway: Invalid value: gateway must be of the same IP family',
  ],

  ['a multicast MAC address', machineWith({ macAddress: '01:00:5e:00:00:01' }), 'spec.network[0].macAddress: Invalid value'],
  ['a broadcast MAC address', machineWith({ macAddress: 'FF:FF:FF:FF:FF:FF' }), 'spec.network[0].macAddress: Invalid value'],
  [
    'vSphere memory not a multiple of 4 MiB',
    { ...machineWith({}), spec: { template: 'ubuntu', numCpus: 2, memoryMiB: 2050 } },
    'spec.memoryMiB: Invalid value: 2050: spec.memoryMiB in body should be a multiple of 4',
  ],
  [
    'an empty failureDomain',
    { ...machineWith({}), spec: { template: 'ubuntu', numCpus: 2, memoryMiB: 2048, failureDomain: '' } },
    'spec.failureDomain: Invalid value',
  ],
  ['a machine address of 0.0.0.0', machineWith({ ipam: { static: { address: '0.0.0.0', prefix: 24 } } }), 'spec.network[0].ipam.static.address: Invalid value'],
];

const accepted: [string, Obj][] = [
  ['an IPv4 address with its gateway in the subnet', vmWith({ address: '192.0.2.5', prefix: 24, gateway: '192.0.2.1' })],
  ['an IPv6 address with prefix 64 and a link-local gateway', vmWith({ address: '2001:db8::5', prefix: 64, gateway: 'fe80::1' })],
  ['an IPv6 address with its gateway in the subnet', vmWith({ address: '2001:db8::5', prefix: 64, gateway: '2001:db8::1' })],
  ['a /32 with no gateway', vmWith({ address: '192.0.2.5', prefix: 32 })],
  [
    'a locally administered unicast MAC',
    machineWith({ macAddress: '02:00:00:ab:cd:ef', ipam: { static: { address: '10.0.0.5', prefix: 24, gateway: '10.0.0.1' } } }),
  ],
];

describeAdmission('bad values refused by the API server', 'bad-values', refused, accepted);
