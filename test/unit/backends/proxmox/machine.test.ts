// The pure parts of a ProxmoxMachine pass: marks, config diff, power steps,
// task references, addresses, MACs, the clone source and the seed.
import { describe, expect, it } from 'vitest';
import type { ProxmoxMachineSpec } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/proxmox-machine.js';
import { agentAddresses, staticAddresses } from '../../../../controller/backends/proxmox/machine/addresses.js';
import { cloneSource } from '../../../../controller/backends/proxmox/machine/clone.js';
import { derivedMac, macOf } from '../../../../controller/backends/proxmox/machine/mac-address.js';
import { nextPowerStep, powerStateOf } from '../../../../controller/backends/proxmox/machine/power.js';
import { needsSeed, seedFiles, seedStorage, seedVolume } from '../../../../controller/backends/proxmox/machine/seed.js';
import { formatTaskRef, parseTaskRef } from '../../../../controller/backends/proxmox/machine/task-ref.js';
import {
  diskGrowths,
  diskSizeGiB,
  firstBootChange,
  hardwareChange,
  identityChange,
  unattachedDisks,
} from '../../../../controller/backends/proxmox/machine/vm-config.js';
import {
  addTag,
  cloneDescription,
  descriptionUuid,
  markOf,
  matchVm,
  marksOf,
  ownerTag,
  releasedDescription,
  smbiosUuid,
  withMarks,
  withoutTag,
  withSmbiosUuid,
} from '../../../../controller/backends/proxmox/machine/vm-marks.js';
import { formatUpid } from '../../../../controller/backends/proxmox/client/upid.js';
import { isBackendError, type BackendError } from '../../../../controller/backends/backend-error.js';

const UUID = '3f1c2b9e-5a7d-5c11-9e0a-1b2c3d4e5f60';
const owner = { kind: 'ProxmoxMachine', namespace: 'team-a', name: 'web-1' };
const spec: ProxmoxMachineSpec = {
  templateVmid: 9000,
  cores: 2,
  memoryMiB: 2048,
  osDiskSizeGiB: 20,
  nics: [{ name: 'eth0', bridge: 'vmbr0', vlan: 20 }],
  dataDisks: [{ name: 'data', sizeGiB: 5, storage: 'ceph', iothread: true }],
};
const template = {
  name: 'web-1',
  cores: 1,
  sockets: 1,
  memory: '2048',
  scsi0: 'local-lvm:vm-105-disk-0,size=10G',
  net0: 'virtio=BC:24:11:AA:BB:CC,bridge=vmbr0',
  net1: 'virtio=BC:24:11:AA:BB:CD,bridge=vmbr1',
  agent: '1',
  smbios1: 'uuid=00000000-0000-4000-8000-000000000000,manufacturer=cXZt',
  digest: 'x',
};

describe('ProxmoxMachine ownership marks', () => {
  it('carries the UUID and the mark in the clone description, read back line by line', () => {
    const description = cloneDescription(owner, UUID);
    expect(markOf(description)).toBe('ProxmoxMachine/team-a/web-1');
    expect(descriptionUuid(description)).toBe(UUID);
    expect(markOf('notes\nbanlieue-owner: ProxmoxMachine/x/y\n')).toBe('ProxmoxMachine/x/y');
    expect(markOf('no mark here')).toBeUndefined();
  });

  it('keeps what a user wrote in the description when adding the lines', () => {
    const merged = withMarks('my notes', owner, UUID);
    expect(merged).toContain('my notes');
    expect(markOf(merged)).toBe('ProxmoxMachine/team-a/web-1');
    expect(withMarks(merged, owner, UUID)).toBe(merged);
  });

  it('writes the mark as a PVE tag, added once', () => {
    expect(ownerTag(owner)).toBe('banlieue.proxmoxmachine.team-a.web-1');
    expect(addTag('prod;k8s', ownerTag(owner))).toBe('prod;k8s;banlieue.proxmoxmachine.team-a.web-1');
    expect(addTag('prod;banlieue.proxmoxmachine.team-a.web-1', ownerTag(owner))).toBeUndefined();
  });

  const OTHER = 'uuid=11111111-1111-4111-8111-111111111111';
  it.each([
    ['its smbios1 UUID is the machine’s', { smbios1: `uuid=${UUID.toUpperCase()}` }, 'Identity'],
    [
      'its smbios1 UUID is the machine’s, whatever its description and tags say',
      { smbios1: `uuid=${UUID}`, description: cloneDescription(owner, UUID), tags: ownerTag(owner) },
      'Identity',
    ],
    [
      'only its description names the machine, untagged: a clone of ours not yet configured',
      { smbios1: OTHER, description: cloneDescription(owner, UUID), tags: 'template;linux' },
      'UnconfiguredClone',
    ],
    [
      'only its description names the machine, and it has the machine’s tag: a PVE copy of a configured VM',
      { smbios1: OTHER, description: cloneDescription(owner, UUID), tags: `prod;${ownerTag(owner).toUpperCase()}` },
      undefined,
    ],
    [
      'its smbios1 and description name another UUID',
      { smbios1: OTHER, description: cloneDescription(owner, '22222222-2222-4222-8222-222222222222') },
      undefined,
    ],
    ['it says nothing', {}, undefined],
  ] as const)('takes a VM for the machine’s when %s', (_, config, expected) => {
    expect(matchVm(config, UUID, owner)).toBe(expected);
  });

  it('sets the smbios1 UUID, keeping its other fields', () => {
    expect(withSmbiosUuid('uuid=x,manufacturer=cXZt', UUID)).toBe(`uuid=${UUID},manufacturer=cXZt`);
    expect(smbiosUuid(withSmbiosUuid(undefined, UUID))).toBe(UUID);
  });
});

describe('ProxmoxMachine release', () => {
  const owner = { kind: 'ProxmoxMachine', namespace: 'vms', name: 'web-1' };
  const uuid = '4b8f2c1e-7a3d-5e6f-8a9b-0c1d2e3f4a5b';

  it('swaps the owner line for the released-from line, keeping the UUID line and what a user wrote', () => {
    const released = releasedDescription(withMarks('built by the image pipeline', owner, uuid), 'ProxmoxMachine/vms/web-1');
    expect(released.split('\n')).toEqual([
      'Released by banlieue, which no longer manages this VM; the two lines below say which machine it was.',
      `banlieue-uuid: ${uuid}`,
      'banlieue-released-from: ProxmoxMachine/vms/web-1',
      '',
      'built by the image pipeline',
    ]);
    expect(marksOf(released)).toEqual({ owner: undefined, releasedFrom: 'ProxmoxMachine/vms/web-1' });
    expect(descriptionUuid(released)).toBe(uuid);
  });

  it('reads the mark of a VM not yet released', () => {
    expect(marksOf(cloneDescription(owner, uuid))).toEqual({ owner: 'ProxmoxMachine/vms/web-1', releasedFrom: undefined });
  });

  it('takes the owner tag away, keeping the others, and says when none is left', () => {
    expect(withoutTag(`prod;${ownerTag(owner)};db`, ownerTag(owner))).toBe('prod;db');
    expect(withoutTag(ownerTag(owner), ownerTag(owner))).toBeUndefined();
  });
});

describe('ProxmoxMachine config', () => {
  it('gives a fresh clone its identity, hardware, NICs with derived MACs, data disks and seed; removes extra NICs', () => {
    const change = { ...firstBootChange({ spec, uuid: UUID, seedVolume: 'local:iso/banlieue-x.iso' }, template), ...identityChange(template, UUID, owner) };
    expect(change).toMatchObject({
      cores: 2,
      net0: `virtio=${derivedMac(UUID, 'eth0')},bridge=vmbr0,tag=20`,
      scsi1: 'ceph:5,iothread=1',
      scsihw: 'virtio-scsi-single',
      ide2: 'local:iso/banlieue-x.iso,media=cdrom',
      delete: 'net1',
      smbios1: `uuid=${UUID},manufacturer=cXZt`,
      tags: 'banlieue.proxmoxmachine.team-a.web-1',
    });
    expect(change).not.toHaveProperty('memory');
    expect(change).not.toHaveProperty('agent');
  });

  it('computes no change for a VM that has its spec', () => {
    const { net1: _removed, ...withoutNet1 } = template;
    const converged = {
      ...withoutNet1,
      cores: 2,
      net0: `virtio=${derivedMac(UUID, 'eth0').toUpperCase()},bridge=vmbr0,tag=20,firewall=1`,
      scsi1: 'ceph:vm-105-disk-1,iothread=1,size=5G',
      scsihw: 'virtio-scsi-single',
      ide2: 'local:iso/banlieue-x.iso,media=cdrom',
      smbios1: `uuid=${UUID}`,
      description: cloneDescription(owner, UUID),
      tags: 'banlieue.proxmoxmachine.team-a.web-1',
    };
    expect({ ...firstBootChange({ spec, uuid: UUID, seedVolume: 'local:iso/banlieue-x.iso' }, converged), ...identityChange(converged, UUID, owner) }).toEqual(
      {},
    );
  });

  it.each([
    [{ memory: 'current=4096' }, { memory: '2048' }],
    [{ memory: '2048', cores: 2 }, {}],
    [{ memory: '2048', cores: 2, sockets: 2 }, { sockets: 1 }],
  ])('compares memory and CPUs by value: %j', (config, expected) => {
    expect(hardwareChange(spec, { cores: 2, ...config })).toEqual(expected);
  });

  it('sets a CPU type only when the spec names one', () => {
    expect(hardwareChange({ ...spec, cpuType: 'host' }, { cores: 2, memory: '2048', cpu: 'cputype=x86-64-v2-AES,flags=+aes' })).toEqual({ cpu: 'host' });
    expect(hardwareChange(spec, { cores: 2, memory: '2048', cpu: 'kvm64' })).toEqual({});
  });

  it('grows the OS disk and smaller data disks, never shrinks, and reports disks added later', () => {
    expect(diskSizeGiB('local-lvm:vm-1-disk-0,size=512M')).toBe(0.5);
    expect(diskGrowths(spec, { ...template, scsi1: 'ceph:vm-1-disk-1,size=4G' })).toEqual([
      { disk: 'scsi0', sizeGiB: 20 },
      { disk: 'scsi1', sizeGiB: 5 },
    ]);
    expect(diskGrowths(spec, { ...template, scsi0: 'local-lvm:vm-1-disk-0,size=40G', scsi1: 'ceph:x,size=5G' })).toEqual([]);
    expect(unattachedDisks(spec, template)).toEqual(['data']);
  });

  it('adds an EFI vars disk for efi firmware, with Secure Boot keys for efi-secure', () => {
    expect(firstBootChange({ spec: { ...spec, firmware: 'efi-secure', storage: 'ceph' }, uuid: UUID }, template)).toMatchObject({
      bios: 'ovmf',
      efidisk0: 'ceph:1,efitype=4m,pre-enrolled-keys=1',
    });
  });
});

describe('ProxmoxMachine power', () => {
  it.each([
    [{ status: 'stopped' as const }, 'PoweredOff'],
    [{ status: 'running' as const, qmpstatus: 'running' }, 'PoweredOn'],
    [{ status: 'running' as const, qmpstatus: 'paused' }, 'Suspended'],
  ])('reads %j as %s', (status, expected) => {
    expect(powerStateOf(status)).toBe(expected);
  });

  it.each([
    ['PoweredOff', 'PoweredOn', 'start'],
    ['Suspended', 'PoweredOn', 'resume'],
    ['PoweredOn', 'PoweredOff', 'shutdown'],
    ['Suspended', 'PoweredOff', 'stop'],
    ['PoweredOff', 'Suspended', 'start'],
    ['PoweredOn', 'Suspended', 'suspend'],
    ['PoweredOn', 'PoweredOn', undefined],
  ] as const)('goes from %s to %s by %s', (current, desired, step) => {
    expect(nextPowerStep(current, desired)).toBe(step);
  });
});

describe('ProxmoxMachine task references', () => {
  it('names the VM a task works on beside its UPID, and refuses what is not one', () => {
    const upid = formatUpid({ node: 'pve1', pid: 0x1234, pstart: 0x5678, starttime: 0x6650_0000, type: 'qmclone', id: '9000', user: 'banlieue@pve!provider' });
    const ref = formatTaskRef({ node: 'pve2', vmid: 105 }, upid);
    expect(parseTaskRef(ref)).toMatchObject({ vm: { node: 'pve2', vmid: 105 }, upid: { node: 'pve1', type: 'qmclone', id: '9000' } });
    expect(parseTaskRef('pve2/105 lock:clone')).toBeUndefined();
    expect(parseTaskRef('task-42')).toBeUndefined();
    expect(parseTaskRef(undefined)).toBeUndefined();
  });
});

describe('ProxmoxMachine addresses and MACs', () => {
  it('reports the agent addresses without loopback or link-local ones', () => {
    const addresses = agentAddresses(
      [
        { name: 'lo', 'ip-addresses': [{ 'ip-address': '127.0.0.1', 'ip-address-type': 'ipv4', prefix: 8 }] },
        {
          name: 'eth0',
          'ip-addresses': [
            { 'ip-address': '10.0.0.5', 'ip-address-type': 'ipv4', prefix: 24 },
            { 'ip-address': 'fe80::1', 'ip-address-type': 'ipv6', prefix: 64 },
            { 'ip-address': '2001:DB8::5', 'ip-address-type': 'ipv6', prefix: 64 },
          ],
        },
      ],
      [],
    );
    expect(addresses).toEqual([
      { type: 'InternalIP', address: '10.0.0.5' },
      { type: 'InternalIP', address: '2001:db8::5' },
    ]);
  });

  it("reports only its own NICs' addresses (by MAC) when they have any: not a Kubernetes node's kube-ipvs0, CNI bridge or docker0", () => {
    const ips = (prefix: string, n: number) =>
      Array.from({ length: n }, (_, i) => ({ 'ip-address': `${prefix}${i + 1}`, 'ip-address-type': 'ipv4' as const, prefix: 32 }));
    const node = [
      { name: 'lo', 'hardware-address': '00:00:00:00:00:00', 'ip-addresses': ips('127.0.0.', 1) },
      { name: 'kube-ipvs0', 'hardware-address': '6e:12:34:56:78:9a', 'ip-addresses': ips('10.96.0.', 200) },
      { name: 'docker0', 'hardware-address': '02:42:ac:11:00:01', 'ip-addresses': ips('172.17.0.', 1) },
      { name: 'eth0', 'hardware-address': 'BC:24:11:00:00:01', 'ip-addresses': ips('10.0.0.', 1) },
    ];
    expect(agentAddresses(node, ['bc:24:11:00:00:01'])).toEqual([{ type: 'InternalIP', address: '10.0.0.1' }]);
    // None on its own NICs (its address is on a guest bridge): every interface's but lo.
    expect(agentAddresses(node, ['bc:24:11:00:00:99'])).toHaveLength(202);
  });

  it('reports static addresses from the spec', () => {
    expect(
      staticAddresses({
        nics: [
          { name: 'eth0', bridge: 'vmbr0', ipam: { static: { address: '192.0.2.10', prefix: 24 } } },
          { name: 'eth1', bridge: 'vmbr1' },
        ],
      }),
    ).toEqual([{ type: 'InternalIP', address: '192.0.2.10' }]);
  });

  it('derives a stable unicast MAC in Proxmox’s OUI per UUID and NIC, unless the spec fixes one', () => {
    const mac = derivedMac(UUID, 'eth0');
    expect(mac).toMatch(/^bc:24:11(:[0-9a-f]{2}){3}$/);
    expect(derivedMac(UUID, 'eth0')).toBe(mac);
    expect(derivedMac(UUID, 'eth1')).not.toBe(mac);
    expect(macOf(UUID, { name: 'eth0', macAddress: '02:00:00:AA:BB:CC' })).toBe('02:00:00:aa:bb:cc');
  });
});

describe('ProxmoxMachine clone source', () => {
  const vms = [
    { id: 'qemu/9000', type: 'qemu' as const, vmid: 9000, node: 'pve1', name: 'ubuntu', template: true },
    { id: 'qemu/9100', type: 'qemu' as const, vmid: 9100, node: 'pve2', name: 'ubuntu', template: true },
    { id: 'qemu/120', type: 'qemu' as const, vmid: 120, node: 'pve1', name: 'app', template: false },
  ];

  it.each([
    ['the template itself on its node', 'pve1', { source: { node: 'pve1', vmid: 9000 } }],
    ['a same-named template on the target node', 'pve2', { source: { node: 'pve2', vmid: 9100 } }],
    ['the template with target elsewhere', 'pve3', { source: { node: 'pve1', vmid: 9000 }, target: 'pve3' }],
  ])('clones %s', (_, node, expected) => {
    expect(cloneSource(vms, 9000, node)).toEqual(expected);
  });

  it('refuses a VMID that is missing or not a template, in the same words (TemplateNotFound): no oracle for which VMs exist', () => {
    const refusals = [9999, 120].map((vmid) => {
      try {
        cloneSource(vms, vmid, 'pve1');
      } catch (err) {
        return err;
      }
      return undefined;
    });
    for (const [i, error] of refusals.entries()) {
      expect(isBackendError(error, 'Rejected')).toBe(true);
      expect((error as BackendError).reason).toBe('TemplateNotFound');
      expect((error as Error).message).toBe(`spec.templateVmid ${[9999, 120][i]}: no template with this VMID in the cluster`);
    }
  });
});

describe('ProxmoxMachine seed', () => {
  it('is needed for user-data or a static address, with an ISO storage', () => {
    expect(needsSeed({ nics: spec.nics }, '#cloud-config\n')).toBe(true);
    expect(needsSeed({ nics: spec.nics }, undefined)).toBe(false);
    expect(needsSeed({ nics: [{ name: 'eth0', bridge: 'vmbr0', ipam: { static: { address: '192.0.2.1', prefix: 24 } } }] }, undefined)).toBe(true);
    expect(seedStorage({}, { isoStorage: 'local' })).toBe('local');
    expect(seedStorage({ isoStorage: 'nfs' }, { isoStorage: 'local' })).toBe('nfs');
    expect(seedVolume('local', UUID)).toBe(`local:iso/banlieue-${UUID}.iso`);
  });

  it('matches NICs by the MAC the VM gets and carries static addresses', () => {
    const files = seedFiles({
      hostname: 'web-1',
      uuid: UUID,
      providerID: `proxmox://${UUID}`,
      spec: { nics: [{ name: 'eth0', bridge: 'vmbr0', ipam: { static: { address: '192.0.2.10', prefix: 24, gateway: '192.0.2.1' } } }] },
      userData: undefined,
    });
    expect(files.metaData).toContain(`instance-id: ${UUID}`);
    expect(files.metaData).toContain(`provider-id: proxmox://${UUID}`);
    expect(files.networkConfig).toContain(`macaddress: ${derivedMac(UUID, 'eth0')}`);
    expect(files.networkConfig).toContain('192.0.2.10/24');
    expect(files.userData).toBe('#cloud-config\n{}\n');
  });

  it('refuses a name or address that could act in the guest', () => {
    expect(() =>
      seedFiles({ hostname: 'web-1\nx: y', uuid: UUID, providerID: 'proxmox://x', spec: { nics: [{ name: 'eth0', bridge: 'vmbr0' }] }, userData: undefined }),
    ).toThrow(/metadata.name/);
  });
});
