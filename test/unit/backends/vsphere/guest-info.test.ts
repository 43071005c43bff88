// guestInfoExtraConfig: the guestinfo keys cloud-init's VMware datasource reads.
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { guestInfoExtraConfig, type GuestInfoInput, type GuestNicInput } from '../../../../controller/backends/vsphere/machine/guest-info.js';

const UUID = '74e4d702-bafd-5e07-8195-ab7a57a18b2a';

function input(change: Partial<GuestInfoInput> = {}): GuestInfoInput {
  return {
    hostname: 'web-1',
    instanceId: UUID,
    providerID: `vsphere://${UUID}`,
    nics: [{ name: 'eth0', macAddress: '00:50:56:AB:CD:EF', ipam: undefined }],
    userData: '#cloud-config\nhostname: web-1\n',
    ...change,
  };
}

const decode = (value: string | undefined): string => Buffer.from(value ?? '', 'base64').toString('utf8');

interface Metadata {
  'instance-id': string;
  'local-hostname': string;
  hostname: string;
  'provider-id': string;
  network: { version: number; ethernets: Record<string, Record<string, unknown>> };
}

function metadataOf(config: Record<string, string>): Metadata {
  return parse(decode(config['guestinfo.metadata'])) as Metadata;
}

const ethernets = (nics: GuestNicInput[]) => metadataOf(guestInfoExtraConfig(input({ nics }))).network.ethernets;

describe('vSphere guestinfo', () => {
  it('writes metadata and user-data, both base64', () => {
    const config = guestInfoExtraConfig(input());

    expect(Object.keys(config).sort()).toEqual(['guestinfo.metadata', 'guestinfo.metadata.encoding', 'guestinfo.userdata', 'guestinfo.userdata.encoding']);
    expect(config['guestinfo.metadata.encoding']).toBe('base64');
    expect(config['guestinfo.userdata.encoding']).toBe('base64');
    expect(config['guestinfo.metadata']).toMatch(/^[A-Za-z0-9+/]+=*$/);
  });

  it('quotes values YAML 1.1 (what cloud-init reads) would retype: a host named "on", an all-digit MAC', () => {
    const config = guestInfoExtraConfig(input({ hostname: 'on', nics: [{ name: 'eth0', macAddress: '52:54:00:12:34:56', ipam: undefined }] }));
    const metadata = decode(config['guestinfo.metadata']);
    expect(parse(metadata, { version: '1.1' })).toMatchObject({ 'local-hostname': 'on', network: { ethernets: { eth0: { match: { macaddress: '52:54:00:12:34:56' } } } } });
  });

  it('names the instance by its UUID, the host by the machine name, and carries the providerID', () => {
    expect(metadataOf(guestInfoExtraConfig(input()))).toMatchObject({
      'instance-id': UUID,
      'local-hostname': 'web-1',
      hostname: 'web-1',
      'provider-id': `vsphere://${UUID}`,
    });
  });

  describe('network config (netplan v2)', () => {
    it('matches each NIC by its lower-cased MAC and names it', () => {
      const meta = metadataOf(guestInfoExtraConfig(input()));
      expect(meta.network.version).toBe(2);
      expect(meta.network.ethernets).toEqual({
        eth0: { match: { macaddress: '00:50:56:ab:cd:ef' }, 'set-name': 'eth0', dhcp4: true, dhcp6: false },
      });
    });

    it('leaves out match and set-name for a NIC whose MAC is unknown', () => {
      expect(ethernets([{ name: 'eth0', macAddress: undefined, ipam: undefined }])).toEqual({ eth0: { dhcp4: true, dhcp6: false } });
    });

    it('uses DHCP for a NIC with ipam but no static address', () => {
      expect(ethernets([{ name: 'eth0', macAddress: undefined, ipam: {} }])).toEqual({ eth0: { dhcp4: true, dhcp6: false } });
    });

    it('gives a static IPv4 NIC its address, a default route via the gateway, nameservers and search domain', () => {
      const nics: GuestNicInput[] = [
        {
          name: 'eth0',
          macAddress: '00:50:56:00:00:01',
          ipam: { static: { address: '10.0.0.5', prefix: 24, gateway: '10.0.0.1', nameservers: ['10.0.0.53', '10.0.1.53'], domain: 'lab.example' } },
        },
      ];
      expect(ethernets(nics)).toEqual({
        eth0: {
          match: { macaddress: '00:50:56:00:00:01' },
          'set-name': 'eth0',
          dhcp4: false,
          dhcp6: false,
          addresses: ['10.0.0.5/24'],
          routes: [{ to: '0.0.0.0/0', via: '10.0.0.1' }],
          nameservers: { addresses: ['10.0.0.53', '10.0.1.53'], search: ['lab.example'] },
        },
      });
    });

    it('gives a static IPv6 NIC a default route to ::/0', () => {
      const nics: GuestNicInput[] = [{ name: 'eth0', macAddress: undefined, ipam: { static: { address: '2001:db8::5', prefix: 64, gateway: '2001:db8::1' } } }];
      expect(ethernets(nics)).toEqual({
        eth0: { dhcp4: false, dhcp6: false, addresses: ['2001:db8::5/64'], routes: [{ to: '::/0', via: '2001:db8::1' }] },
      });
    });

    it.each([
      ['no gateway, nameservers or domain', { address: '10.0.0.5', prefix: 24 }, {}],
      ['nameservers only', { address: '10.0.0.5', prefix: 24, nameservers: ['10.0.0.53'] }, { nameservers: { addresses: ['10.0.0.53'] } }],
      ['a domain only', { address: '10.0.0.5', prefix: 24, domain: 'lab.example' }, { nameservers: { search: ['lab.example'] } }],
      ['an empty nameserver list', { address: '10.0.0.5', prefix: 24, nameservers: [] }, {}],
    ])('writes only what is set for a static NIC with %s', (_what, fixed, extra) => {
      expect(ethernets([{ name: 'eth0', macAddress: undefined, ipam: { static: fixed } }])).toEqual({
        eth0: { dhcp4: false, dhcp6: false, addresses: ['10.0.0.5/24'], ...extra },
      });
    });

    it('writes one ethernet per NIC, keyed by its name', () => {
      const result = ethernets([
        { name: 'eth0', macAddress: '00:50:56:00:00:01', ipam: { static: { address: '10.0.0.5', prefix: 24 } } },
        { name: 'backup', macAddress: '00:50:56:00:00:02', ipam: undefined },
      ]);
      expect(Object.keys(result)).toEqual(['eth0', 'backup']);
      expect(result.backup).toEqual({ match: { macaddress: '00:50:56:00:00:02' }, 'set-name': 'backup', dhcp4: true, dhcp6: false });
    });

    it('writes an empty ethernets map when the machine has no network', () => {
      expect(metadataOf(guestInfoExtraConfig(input({ nics: [] }))).network).toEqual({ version: 2, ethernets: {} });
    });
  });

  describe('user-data', () => {
    it('round-trips byte for byte, including non-ASCII text', () => {
      const userData = '#cloud-config\nwrite_files:\n  - path: /etc/motd\n    content: "Grüße, 世界 🚀\\n"\n# trailing spaces   \n\n';
      const config = guestInfoExtraConfig(input({ userData }));

      expect(Buffer.from(config['guestinfo.userdata'] ?? '', 'base64').equals(Buffer.from(userData, 'utf8'))).toBe(true);
      expect(decode(config['guestinfo.userdata'])).toBe(userData);
    });

    it('writes empty values, which remove the keys, when there is no user-data', () => {
      const config = guestInfoExtraConfig(input({ userData: undefined }));

      expect(config['guestinfo.userdata']).toBe('');
      expect(config['guestinfo.userdata.encoding']).toBe('');
      expect(metadataOf(config)['instance-id']).toBe(UUID);
    });
  });
});
