// The NoCloud seed: instance-id is the UUID, NICs matched by MAC with their static addresses, unsafe values refused.
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { toSeedFiles, toSeedImage } from '../../../../controller/backends/cloud-init/nocloud-seed.js';

const UUID = '6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b';
const base = { uuid: UUID, hostname: 'web-1', providerID: `cloudhypervisor://${UUID}`, userData: '#cloud-config\n', nicsField: 'spec.nics' };

describe('NoCloud seed of a machine', () => {
  it('names the instance by the UUID and renders static addressing matched by MAC', () => {
    const files = toSeedFiles({
      ...base,
      nics: [{ name: 'eth0', mac: '02:aa:bb:cc:dd:ee', ipam: { static: { address: '10.0.0.5', prefix: 24, gateway: '10.0.0.1', nameservers: ['10.0.0.2'] } } }],
    });
    expect(parse(files.metaData)).toEqual({ 'instance-id': UUID, 'local-hostname': 'web-1', 'provider-id': `cloudhypervisor://${UUID}` });
    expect(parse(files.networkConfig)).toEqual({
      version: 2,
      ethernets: {
        eth0: {
          match: { macaddress: '02:aa:bb:cc:dd:ee' },
          'set-name': 'eth0',
          dhcp4: false,
          dhcp6: false,
          addresses: ['10.0.0.5/24'],
          routes: [{ to: '0.0.0.0/0', via: '10.0.0.1' }],
          nameservers: { addresses: ['10.0.0.2'] },
        },
      },
    });
    expect(files.userData).toBe('#cloud-config\n');
  });

  it('writes an empty cloud-config without user-data, and DHCP for a NIC without a static address', () => {
    const files = toSeedFiles({ ...base, userData: undefined, nics: [{ name: 'eth0', mac: '02:aa:bb:cc:dd:ee', ipam: undefined }] });
    expect(files.userData).toBe('#cloud-config\n{}\n');
    expect(parse(files.networkConfig).ethernets.eth0).toMatchObject({ dhcp4: true });
  });

  it.each([
    [{ hostname: 'web_1\nruncmd' }, /metadata\.name/],
    [{ nics: [{ name: 'eth0', mac: '02:aa:bb:cc:dd:ee', ipam: { static: { address: '10.0.0.5\n', prefix: 24 } } }] }, /spec\.nics\[0\]\.ipam\.static\.address/],
    [{ nics: [{ name: 'eth0/..', mac: '02:aa:bb:cc:dd:ee', ipam: undefined }] }, /spec\.nics\[0\]\.name/],
  ])('refuses what could act in the guest beyond its YAML scalar: %#', (change, message) => {
    expect(() => toSeedFiles({ ...base, nics: [], ...change })).toThrow(message);
  });

  it('is an ISO 9660 image labelled cidata', () => {
    const image = toSeedImage({ ...base, nics: [] });
    expect(image.length % 2048).toBe(0);
    expect(image.subarray(16 * 2048 + 1, 16 * 2048 + 6).toString('latin1')).toBe('CD001');
    expect(image.subarray(16 * 2048 + 40, 16 * 2048 + 46).toString('latin1')).toMatch(/^cidata/i);
  });
});
