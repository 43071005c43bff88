// Names that parse but cannot work, refused by the real kube-apiserver with a
// message naming the field instead of being changed or refused later: a
// failure-domain name override that is not a DNS label (never silently
// slugified), and a machine named beyond its backend's limit (vCenter takes VM
// names of at most 80 characters; Kubernetes names run to 253; a libvirt
// domain name at most 200, as files are named after it).
import { describeAdmission, type AdmissionObject as Obj } from '../support/admission-table.js';

const providerWith = (overrides: Record<string, unknown>[]): Obj => ({
  apiVersion: 'banlieue.io/v1alpha1',
  kind: 'Provider',
  metadata: { name: 'vcenter' },
  spec: {
    providerClassRef: { name: 'vsphere' },
    connection: { endpoint: 'https://vc.example.com/sdk', credentialsRef: { name: 'creds' } },
    failureDomainNameOverrides: overrides,
  },
});

const vsphereMachine = (name: string): Obj => ({
  apiVersion: 'infrastructure.banlieue.io/v1alpha1',
  kind: 'VSphereMachine',
  metadata: { name },
  spec: { template: 'ubuntu', numCpus: 2, memoryMiB: 2048 },
});

const proxmoxMachine = (name: string): Obj => ({
  apiVersion: 'infrastructure.banlieue.io/v1alpha1',
  kind: 'ProxmoxMachine',
  metadata: { name },
  spec: { templateVmid: 9000, cores: 2, memoryMiB: 2048, osDiskSizeGiB: 20, nics: [{ name: 'net0', bridge: 'vmbr0' }] },
});

const libvirtMachine = (name: string, domainName?: string): Obj => ({
  apiVersion: 'infrastructure.banlieue.io/v1alpha1',
  kind: 'LibvirtMachine',
  metadata: { name },
  spec: {
    ...(domainName ? { domainName } : {}),
    pool: 'default',
    bootSource: { kind: 'backingVolume', volume: 'ubuntu.qcow2' },
    vcpus: 2,
    memoryMiB: 2048,
    disks: [{ name: 'os', sizeGiB: 20 }],
  },
});

const named = (length: number): string => `m-${'x'.repeat(length - 2)}`;

/** [what, object, text the API server's message must contain]. */
const refused: [string, Obj, string][] = [
  [
    'a failure-domain override with spaces and markup',
    providerWith([{ cluster: 'C1', name: 'Bad Name <&>' }]),
    'spec.failureDomainNameOverrides[0].name: Invalid value: "Bad Name <&>"',
  ],
  [
    'a failure-domain override in upper case with an underscore',
    providerWith([
      { cluster: 'C1', name: 'rack-1' },
      { cluster: 'C2', name: 'Zone_A' },
    ]),
    'spec.failureDomainNameOverrides[1].name: Invalid value: "Zone_A"',
  ],
  ['a failure-domain override ending in a dash', providerWith([{ cluster: 'C1', name: 'rack-' }]), 'spec.failureDomainNameOverrides[0].name'],
  [
    'a VSphereMachine named beyond 80 characters',
    vsphereMachine(named(81)),
    'metadata.name must be at most 80 characters: vCenter takes VM names of at most 80 characters',
  ],
  ['a libvirt domain name beyond 200 characters (libvirt names files after it)', libvirtMachine('lvm', named(201)), 'spec.domainName: Too long'],
];

const accepted: [string, Obj][] = [
  [
    'failure-domain overrides that are DNS labels',
    providerWith([
      { cluster: 'C1', name: 'rack-1' },
      { datacenter: 'DC0', cluster: 'C2', name: '0edge' },
    ]),
  ],
  ['a VSphereMachine named with 80 characters', vsphereMachine(named(80))],
  ['a ProxmoxMachine named with 200 characters (Proxmox takes any Kubernetes name)', proxmoxMachine(named(200))],
  ['a LibvirtMachine named with 253 characters (its default domain name is cut to fit)', libvirtMachine(named(253))],
  ['a libvirt domain name of 200 characters', libvirtMachine('lvm', named(200))],
];

describeAdmission('bad names refused by the API server', 'bad-names', refused, accepted);
