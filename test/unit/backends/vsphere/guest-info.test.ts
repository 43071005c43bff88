// guestInfoExtraConfig: the guestinfo keys cloud-init's VMware datasource reads.
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { guestInfoExtraConfig, type GuestInfoInput, type GuestNicInput } from '../../../../controller/backends/vsphere/machine/guest-info.js';
import { BackendErrorKind, isBackendError } from '../../../../controller/backends/backend-error.js';

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
    expect(parse(metadata, { version: '1.1' })).toMatchObject({
      'local-hostname': 'on',
      network: { ethernets: { eth0: { match: { macaddress: '52:54:00:12:34:56' } } } },
    });
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

  describe('injection', () => {
    const METADATA_KEYS = ['instance-id', 'local-hostname', 'hostname', 'provider-id', 'network'];
    const PAYLOADS: [string, string][] = [
      ['a newline and a key', 'eth0\nbootcmd: [reboot]'],
      ['a command substitution', '$(reboot)'],
      ['": "', 'eth0: reboot'],
      ['"#"', 'eth0 #reboot'],
      ['a path', '../../etc/reboot'],
      ['a double quote', 'eth0"'],
      ['a space', 'eth 0'],
    ];

    /** The BackendError guestInfoExtraConfig throws for `change`, or undefined when it renders. */
    function refusal(change: Partial<GuestInfoInput>): { kind: string; message: string } | undefined {
      try {
        guestInfoExtraConfig(input(change));
        return undefined;
      } catch (err) {
        if (!isBackendError(err)) throw err;
        return { kind: err.kind, message: err.message };
      }
    }

    it.each([['eth0'], ['ens192'], ['eth0.100'], ['bond_0-a'], ['a23456789012345'], ['on'], ['0755']])(
      'keys and names a NIC %j with exactly its own keys',
      (name) => {
        const config = guestInfoExtraConfig(
          input({ nics: [{ name, macAddress: '00:50:56:00:00:01', ipam: { static: { address: '10.0.0.5', prefix: 24, domain: 'lab.example' } } }] }),
        );
        // As cloud-init reads it: YAML 1.1, where a bare `on` or `0755` would be retyped.
        const meta = parse(decode(config['guestinfo.metadata']), { version: '1.1' }) as Metadata;
        expect(Object.keys(meta)).toEqual(METADATA_KEYS);
        expect(Object.keys(meta.network)).toEqual(['version', 'ethernets']);
        expect(Object.keys(meta.network.ethernets)).toEqual([name]);
        expect(Object.keys(meta.network.ethernets[name] ?? {})).toEqual(['match', 'set-name', 'dhcp4', 'dhcp6', 'addresses', 'nameservers']);
        expect(meta.network.ethernets[name]?.['set-name']).toBe(name);
      },
    );

    it('keys a NIC whose name is longer than an interface name allows (a class from before the pattern) but does not rename it', () => {
      expect(ethernets([{ name: 'management-network', macAddress: '00:50:56:00:00:01', ipam: undefined }])).toEqual({
        'management-network': { match: { macaddress: '00:50:56:00:00:01' }, dhcp4: true, dhcp6: false },
      });
    });

    it.each(PAYLOADS)('refuses a NIC name with %s, naming the field', (_what, name) => {
      expect(
        refusal({
          nics: [
            { name: 'eth0', macAddress: undefined, ipam: undefined },
            { name, macAddress: '00:50:56:00:00:01', ipam: undefined },
          ],
        }),
      ).toEqual({
        kind: BackendErrorKind.Rejected,
        message: expect.stringContaining(`spec.network[1].name ${JSON.stringify(name)} is not a Linux interface name`) as string,
      });
    });

    it.each(PAYLOADS)('refuses a search domain with %s, naming the field', (_what, domain) => {
      expect(refusal({ nics: [{ name: 'eth0', macAddress: undefined, ipam: { static: { address: '10.0.0.5', prefix: 24, domain } } }] })).toEqual({
        kind: BackendErrorKind.Rejected,
        message: expect.stringContaining(`spec.network[0].ipam.static.domain ${JSON.stringify(domain)} is not a DNS name`) as string,
      });
    });

    it.each(PAYLOADS)('refuses a host name with %s', (_what, hostname) => {
      expect(refusal({ hostname })?.message).toContain(`metadata.name ${JSON.stringify(hostname)} is not a DNS name`);
    });

    it.each([
      ['address', { address: '10.0.0.5\nbootcmd: [reboot]', prefix: 24 }, 'spec.network[0].ipam.static.address'],
      ['gateway', { address: '10.0.0.5', prefix: 24, gateway: '10.0.0.1 #x' }, 'spec.network[0].ipam.static.gateway'],
      ['nameserver', { address: '10.0.0.5', prefix: 24, nameservers: ['10.0.0.53', '$(reboot)'] }, 'spec.network[0].ipam.static.nameservers[1]'],
    ])('refuses a static %s that is no IP address', (_what, fixed, field) => {
      expect(refusal({ nics: [{ name: 'eth0', macAddress: undefined, ipam: { static: fixed } }] })?.message).toContain(field);
    });

    it('refuses a MAC address that is none', () => {
      expect(refusal({ nics: [{ name: 'eth0', macAddress: '00:50:56:00:00:01\nx', ipam: undefined }] })?.message).toContain('spec.network[0].macAddress');
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
