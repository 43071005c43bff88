// The domain XML of a LibvirtMachine (pure): what libvirt is told, and the
// ownership mark read back from what libvirt returns.
import { XMLParser } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import {
  marksOf,
  METADATA_NAMESPACE,
  ownerMarkOf,
  releasedMetadataXml,
  toDomainXml,
  toVolumeXml,
  volumeFactsOf,
  type DomainInput,
} from '../../../../controller/backends/libvirt/machine/domain-xml.js';

const UUID = '6f1c1e0a-1b2c-5d3e-8f40-123456789abc';

function input(extra: Partial<DomainInput> = {}): DomainInput {
  return {
    type: 'kvm',
    name: 'vms-web-1',
    uuid: UUID,
    owner: 'LibvirtMachine/vms/web-1',
    vcpus: 2,
    memoryMiB: 2048,
    firmware: 'bios',
    machineType: undefined,
    disks: [
      { pool: 'nvme', volume: `${UUID}-os.qcow2`, format: 'qcow2', bus: 'virtio' },
      { pool: 'nvme', volume: `${UUID}-data.qcow2`, format: 'qcow2', bus: 'scsi' },
    ],
    installMedia: undefined,
    seed: { pool: 'nvme', volume: `${UUID}-cidata.iso` },
    nics: [{ kind: 'network', source: 'default', mac: '02:aa:bb:cc:dd:ee', model: 'virtio' }],
    consoleLog: '/var/log/libvirt/qemu/vms-web-1-console.log',
    ...extra,
  };
}

const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@', isArray: (name) => ['disk', 'interface', 'boot', 'feature'].includes(name) });
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const parse = (xml: string): any => parser.parse(xml).domain;

describe('LibvirtMachine domain XML', () => {
  it('names the domain, carries the machine UUID and the ownership mark in its own namespace', () => {
    const domain = parse(toDomainXml(input()));
    expect(domain['@type']).toBe('kvm');
    expect(domain.name).toBe('vms-web-1');
    expect(domain.uuid).toBe(UUID);
    expect(domain.metadata['banlieue:machine']).toEqual({ '@xmlns:banlieue': METADATA_NAMESPACE, '@owner': 'LibvirtMachine/vms/web-1' });
    expect(domain.memory).toEqual({ '@unit': 'MiB', '#text': 2048 });
    expect(domain.vcpu['#text']).toBe(2);
    expect(domain.cpu).toEqual({ '@mode': 'host-passthrough' });
    expect([domain.on_poweroff, domain.on_reboot, domain.on_crash]).toEqual(['destroy', 'restart', 'destroy']);
  });

  it('gives disks pool volumes, vdX on virtio and sdX shared by SCSI disks and the CD-ROMs on a virtio-scsi controller', () => {
    const { devices } = parse(toDomainXml(input()));
    expect(
      devices.disk.map((d: { target: { '@dev': string; '@bus': string }; '@device': string }) => [d['@device'], d.target['@dev'], d.target['@bus']]),
    ).toEqual([
      ['disk', 'vda', 'virtio'],
      ['disk', 'sda', 'scsi'],
      ['cdrom', 'sdb', 'scsi'],
    ]);
    expect(devices.disk[0].source).toEqual({ '@pool': 'nvme', '@volume': `${UUID}-os.qcow2` });
    expect(devices.disk[2].readonly).toBe('');
    expect(devices.controller).toEqual({ '@type': 'scsi', '@index': '0', '@model': 'virtio-scsi' });
    expect(devices.interface).toEqual([
      { '@type': 'network', source: { '@network': 'default' }, mac: { '@address': '02:aa:bb:cc:dd:ee' }, model: { '@type': 'virtio' } },
    ]);
    expect(devices.serial).toMatchObject({ '@type': 'pty', log: { '@file': '/var/log/libvirt/qemu/vms-web-1-console.log', '@append': 'on' } });
    expect(devices.channel.target['@name']).toBe('org.qemu.guest_agent.0');
  });

  it('boots the installer first when there is one, and plugs bridge NICs into their bridge', () => {
    const { os, devices } = parse(
      toDomainXml(
        input({ installMedia: { pool: 'isos', volume: 'debian.iso' }, nics: [{ kind: 'bridge', source: 'br0', mac: '02:00:00:00:00:01', model: 'e1000' }] }),
      ),
    );
    expect(os.boot).toEqual([{ '@dev': 'cdrom' }, { '@dev': 'hd' }]);
    expect(
      devices.disk.filter((d: { '@device': string }) => d['@device'] === 'cdrom').map((d: { source: { '@volume': string } }) => d.source['@volume']),
    ).toEqual(['debian.iso', `${UUID}-cidata.iso`]);
    expect(devices.interface[0]).toMatchObject({ '@type': 'bridge', source: { '@bridge': 'br0' }, model: { '@type': 'e1000' } });
  });

  it.each([
    ['bios', undefined, undefined, undefined],
    ['efi', 'efi', undefined, undefined],
    ['efi-secure', 'efi', 'q35', { '@state': 'on' }],
  ] as const)('firmware %s: os firmware %s, machine %s, smm %o', (firmware, osFirmware, machine, smm) => {
    const domain = parse(toDomainXml(input({ firmware })));
    expect(domain.os['@firmware']).toBe(osFirmware);
    expect(domain.os.type['@machine']).toBe(machine);
    expect(domain.features.smm).toEqual(smm);
    if (firmware === 'efi-secure') expect(domain.os.firmware.feature.map((f: { '@name': string }) => f['@name'])).toEqual(['secure-boot', 'enrolled-keys']);
  });

  it('asks TCG (type qemu) for no host CPU model', () => {
    const domain = parse(toDomainXml(input({ type: 'qemu' })));
    expect(domain['@type']).toBe('qemu');
    expect(domain.cpu).toBeUndefined();
  });

  it('escapes what it is given: a name or mark cannot add elements', () => {
    const xml = toDomainXml(input({ name: "x'/><on_crash>preserve</on_crash><name>y", owner: 'LibvirtMachine/a"b/<c>' }));
    const domain = parse(xml);
    expect(domain.name).toBe("x'/><on_crash>preserve</on_crash><name>y");
    expect(domain.on_crash).toBe('destroy');
    expect(ownerMarkOf(xml)).toBe('LibvirtMachine/a"b/<c>');
  });
});

describe('ownership mark read back', () => {
  it('reads the mark whatever prefix libvirt writes it under, and only in our namespace', () => {
    const wrap = (meta: string): string => `<domain type='kvm'><name>x</name><metadata>${meta}</metadata></domain>`;
    expect(ownerMarkOf(wrap(`<b:machine xmlns:b='${METADATA_NAMESPACE}' owner='LibvirtMachine/ns/x'/>`))).toBe('LibvirtMachine/ns/x');
    expect(ownerMarkOf(wrap(`<b:machine xmlns:b='https://example.com/other' owner='LibvirtMachine/ns/x'/>`))).toBeUndefined();
    expect(ownerMarkOf("<domain type='kvm'><name>x</name></domain>")).toBeUndefined();
  });

  it('writes a released element with no owner, the mark it had escaped, and reads it back as released', () => {
    const element = releasedMetadataXml('LibvirtMachine/a"b/<c>');
    expect(element).toEqual({ uri: METADATA_NAMESPACE, key: 'banlieue', xml: '<machine released-from="LibvirtMachine/a&quot;b/&lt;c&gt;"/>' });
    // As libvirt writes it back in the domain's XML: under our prefix, with our namespace.
    const xml = `<domain type='kvm'><name>x</name><metadata><banlieue:machine xmlns:banlieue='${METADATA_NAMESPACE}' released-from='LibvirtMachine/a&quot;b/&lt;c&gt;'/></metadata></domain>`;
    expect(marksOf(xml)).toEqual({ owner: undefined, releasedFrom: 'LibvirtMachine/a"b/<c>' });
  });
});

describe('volume XML', () => {
  it('makes a qcow2 overlay on its backing volume, and reads path, format and capacity of a volume', () => {
    const xml = toVolumeXml('u-os.qcow2', 21474836480, 'qcow2', { path: '/pool/base.qcow2', format: 'qcow2' });
    expect(xml).toContain('<capacity unit="bytes">21474836480</capacity>');
    expect(xml).toContain('<backingStore>');
    const facts = volumeFactsOf(
      "<volume type='file'><name>base.qcow2</name><capacity unit='bytes'>1073741824</capacity><target><path>/pool/base.qcow2</path><format type='qcow2'/></target></volume>",
    );
    expect(facts).toEqual({ path: '/pool/base.qcow2', format: 'qcow2', capacityBytes: 1073741824 });
  });
});
