// The NoCloud seed of a LibvirtMachine (pure): what cloud-init reads.
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { isBackendError, BackendErrorKind } from '../../../../controller/backends/backend-error.js';
import { toSeedFiles, toSeedImage, type SeedInput } from '../../../../controller/backends/cloud-init/nocloud-seed.js';

const input: SeedInput = {
  uuid: '6f1c1e0a-1b2c-5d3e-8f40-123456789abc',
  hostname: 'web-1',
  providerID: 'libvirt://6f1c1e0a-1b2c-5d3e-8f40-123456789abc',
  nicsField: 'spec.network',
  userData: '#cloud-config\nhostname: web-1\n',
  nics: [
    { name: 'eth0', mac: '02:aa:bb:cc:dd:ee', ipam: undefined },
    {
      name: 'eth1',
      mac: '02:aa:bb:cc:dd:ef',
      ipam: { static: { address: '198.51.100.50', prefix: 24, gateway: '198.51.100.1', nameservers: ['198.51.100.53'], domain: 'lab.example.com' } },
    },
  ],
};

describe('LibvirtMachine NoCloud seed', () => {
  it('names the instance by its UUID, with hostname and providerID', () => {
    expect(parse(toSeedFiles(input).metaData)).toEqual({ 'instance-id': input.uuid, 'local-hostname': 'web-1', 'provider-id': input.providerID });
  });

  it('passes the user-data as rendered, and an empty cloud-config without any', () => {
    expect(toSeedFiles(input).userData).toBe('#cloud-config\nhostname: web-1\n');
    expect(toSeedFiles({ ...input, userData: undefined }).userData).toBe('#cloud-config\n{}\n');
  });

  it('matches each NIC by MAC: DHCP, or the static address with its route and DNS', () => {
    expect(parse(toSeedFiles(input).networkConfig)).toEqual({
      version: 2,
      ethernets: {
        eth0: { match: { macaddress: '02:aa:bb:cc:dd:ee' }, 'set-name': 'eth0', dhcp4: true, dhcp6: false },
        eth1: {
          match: { macaddress: '02:aa:bb:cc:dd:ef' },
          'set-name': 'eth1',
          dhcp4: false,
          dhcp6: false,
          addresses: ['198.51.100.50/24'],
          routes: [{ to: '0.0.0.0/0', via: '198.51.100.1' }],
          nameservers: { addresses: ['198.51.100.53'], search: ['lab.example.com'] },
        },
      },
    });
  });

  it('writes an ISO 9660 image labelled cidata', () => {
    const image = toSeedImage(input);
    expect(image.length % 2048).toBe(0);
    // The primary volume descriptor at sector 16: "CD001", then the volume id at offset 40.
    expect(image.subarray(16 * 2048 + 1, 16 * 2048 + 6).toString('ascii')).toBe('CD001');
    expect(image.subarray(16 * 2048 + 40, 16 * 2048 + 46).toString('ascii')).toBe('cidata');
  });

  it.each([
    ['a hostname that is no DNS name', { hostname: 'web_1\nruncmd' }, 'metadata.name'],
    ['an interface name with a slash', { nics: [{ name: 'eth0/x', mac: '02:00:00:00:00:01', ipam: undefined }] }, 'spec.network[0].name'],
    [
      'a static address that is no IP',
      { nics: [{ name: 'eth0', mac: '02:00:00:00:00:01', ipam: { static: { address: '1.2.3.4\n', prefix: 24 } } }] },
      'spec.network[0].ipam.static.address',
    ],
  ])('refuses %s, naming the field', (_what, change, field) => {
    let error: unknown;
    try {
      toSeedFiles({ ...input, ...change } as SeedInput);
    } catch (err) {
      error = err;
    }
    expect(isBackendError(error, BackendErrorKind.Rejected)).toBe(true);
    expect((error as Error).message).toContain(field);
  });
});
