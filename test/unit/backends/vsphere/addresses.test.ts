// addressesOf: the guest addresses a VSphereMachine reports (and CAPI copies to the Machine).
import { describe, expect, it } from 'vitest';
import type { GuestNic, VmSummary } from '../../../../controller/backends/vsphere/client/vim-types.js';
import { addressesOf } from '../../../../controller/backends/vsphere/machine/vsphere-machines.js';

function guestNic(ipAddresses: string[], macAddress = '00:50:56:00:00:01', deviceConfigId = 4000): GuestNic {
  return { macAddress, network: 'VM Network', ipAddresses, connected: true, deviceConfigId };
}

function summary(ipAddress: string | undefined, nics: GuestNic[]): VmSummary {
  return {
    ref: { type: 'VirtualMachine', value: 'vm-42' },
    name: 'web-1',
    uuid: '74e4d702-bafd-5e07-8195-ab7a57a18b2a',
    instanceUuid: undefined,
    template: false,
    powerState: 'poweredOn',
    ipAddress,
    guestNics: nics,
  };
}

const addresses = (s: VmSummary): string[] => addressesOf(s).map((a) => a.address);

describe('vSphere machine addresses', () => {
  it('reports every address as InternalIP', () => {
    expect(addressesOf(summary('10.0.0.5', [guestNic(['10.0.0.5', '2001:db8::5'])]))).toEqual([
      { type: 'InternalIP', address: '10.0.0.5' },
      { type: 'InternalIP', address: '2001:db8::5' },
    ]);
  });

  it('puts the primary address first, then the NICs’ in order', () => {
    const s = summary('10.0.1.5', [guestNic(['10.0.0.5', '2001:db8::5']), guestNic(['10.0.1.5', '10.0.2.5'], '00:50:56:00:00:02')]);
    expect(addresses(s)).toEqual(['10.0.1.5', '10.0.0.5', '2001:db8::5', '10.0.2.5']);
  });

  it('lists an address once, however often the guest reports it', () => {
    const s = summary('10.0.0.5', [guestNic(['10.0.0.5', '10.0.0.5']), guestNic(['10.0.0.5', '10.0.3.5'], '00:50:56:00:00:02')]);
    expect(addresses(s)).toEqual(['10.0.0.5', '10.0.3.5']);
  });

  it.each([
    ['IPv6 link-local', 'fe80::250:56ff:fe00:1'],
    ['IPv6 link-local, upper case', 'FE80::250:56FF:FE00:1'],
    ['IPv4 link-local', '169.254.10.20'],
    ['IPv4 loopback', '127.0.0.1'],
    ['IPv4 loopback, not .1', '127.0.1.1'],
    ['IPv6 loopback', '::1'],
  ])('drops a %s address (%s)', (_what, address) => {
    expect(addresses(summary(address, [guestNic([address, '10.0.0.5'])]))).toEqual(['10.0.0.5']);
  });

  it.each([
    ['an IPv6 global address containing ::1', '2001:db8::1'],
    ['an IPv6 ULA', 'fd00::5'],
    ['an IPv4 address with 169.254 elsewhere', '10.169.254.1'],
    ['an IPv4 address with 127 elsewhere', '10.127.0.1'],
  ])('keeps %s (%s)', (_what, address) => {
    expect(addresses(summary(undefined, [guestNic([address])]))).toEqual([address]);
  });

  it("reports only its own NICs' addresses when they have any: not a Kubernetes node's kube-ipvs0 or docker0 (deviceConfigId -1)", () => {
    const ipvs = guestNic(
      Array.from({ length: 200 }, (_, i) => `10.96.0.${i + 1}`),
      '6e:12:34:56:78:9a',
      -1,
    );
    const docker = guestNic(['172.17.0.1'], '02:42:ac:11:00:01', -1);
    expect(addresses(summary('10.0.0.5', [ipvs, guestNic(['10.0.0.5']), docker]))).toEqual(['10.0.0.5']);
    // Tools has not named a primary yet and no NIC of the VM has an address (it is on a guest bridge): the others'.
    expect(addresses(summary(undefined, [guestNic([]), guestNic(['192.0.2.7'], '02:00:00:00:00:01', -1)]))).toEqual(['192.0.2.7']);
  });

  it('is empty before VMware Tools reports anything', () => {
    expect(addressesOf(summary(undefined, []))).toEqual([]);
    expect(addressesOf(summary(undefined, [guestNic([])]))).toEqual([]);
  });

  it('drops an empty primary address', () => {
    expect(addresses(summary('', [guestNic(['10.0.0.5'])]))).toEqual(['10.0.0.5']);
  });

  it('is empty when the guest reports only link-local and loopback addresses', () => {
    expect(addressesOf(summary('169.254.1.1', [guestNic(['fe80::1', '127.0.0.1', '::1'])]))).toEqual([]);
  });
});
