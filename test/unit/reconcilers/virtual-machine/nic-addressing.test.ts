// computeNicAddressing: per class interface, static from the VM's override or DHCP;
// and no interface name or domain the guest must not be given.
import { describe, expect, it } from 'vitest';
import { computeNicAddressing } from '../../../../controller/reconcilers/virtual-machine/nic-addressing.js';
import type { VMClass } from '../../../../infra/api/banlieue.io/v1alpha1/vm-class.js';
import { aClass, aStaticClass, aVm } from './fixtures.js';

/** A class whose only interface has `name` and, when given, a class-level domain. */
function aClassWith(name: string, domain?: string): VMClass {
  return aClass({ network: { interfaces: [{ name, networkClass: 'prod', ...(domain !== undefined ? { ipam: { mode: 'static', domain } } : {}) }] } });
}

const UNSAFE: [string, string][] = [
  ['a newline and a key', 'lab.example\nruncmd: [reboot]'],
  ['a command substitution', '$(reboot)'],
  ['": "', 'lab: reboot'],
  ['"#"', 'lab #reboot'],
];

describe('NIC addressing', () => {
  it('completes an override with its class interface and leaves the others on DHCP', () => {
    const vm = aVm({ networkOverrides: [{ name: 'eth0', static: { address: '10.0.0.10', prefix: 24 } }] });
    expect(computeNicAddressing(vm, aStaticClass())).toEqual({
      ok: true,
      ipams: [{ static: { address: '10.0.0.10', prefix: 24, gateway: '10.0.0.1', nameservers: ['10.0.0.53', '10.0.1.53'], domain: 'lab.example' } }, undefined],
    });
  });

  it('accepts an upper-case domain and a long interface name an object from before the schema patterns may hold', () => {
    const vm = aVm({ networkOverrides: [{ name: 'management-network', static: { address: '10.0.0.10', prefix: 24, domain: 'Lab.Example' } }] });
    expect(computeNicAddressing(vm, aClassWith('management-network')).ok).toBe(true);
  });

  it.each(UNSAFE)('refuses an override domain with %s, naming the field', (_what, domain) => {
    const vm = aVm({ networkOverrides: [{ name: 'eth0', static: { address: '10.0.0.10', prefix: 24, domain } }] });
    expect(computeNicAddressing(vm, aStaticClass())).toEqual({
      ok: false,
      message: `spec.networkOverrides[0].static.domain ${JSON.stringify(domain)} is not a DNS name`,
    });
  });

  // A static override on a DHCP interface must not be accepted and reported Ready.
  it('refuses a static address for an interface the class puts in dhcp mode, and takes one where the class says nothing', () => {
    const vm = aVm({ networkOverrides: [{ name: 'eth0', static: { address: '10.0.0.10', prefix: 24 } }] });
    const dhcp = aClass({ network: { interfaces: [{ name: 'eth0', networkClass: 'prod', ipam: { mode: 'dhcp' } }] } });
    expect(computeNicAddressing(vm, dhcp)).toEqual({
      ok: false,
      message: 'spec.networkOverrides sets a static address for interface "eth0", whose class ipam mode is dhcp',
    });
    const unstated = aClass({ network: { interfaces: [{ name: 'eth0', networkClass: 'prod' }] } });
    expect(computeNicAddressing(vm, unstated)).toEqual({ ok: true, ipams: [{ static: { address: '10.0.0.10', prefix: 24 } }] });
  });

  // A gateway outside the subnet, or of the other family, must not be accepted and reported Ready.
  it.each<[string, Record<string, unknown>, string | undefined]>([
    [
      'its own gateway outside the subnet',
      { address: '192.0.2.5', prefix: 24, gateway: '198.51.100.1' },
      'interface "eth0": gateway 198.51.100.1 is outside the subnet 192.0.2.5/24',
    ],
    [
      "the class gateway outside the VM's subnet",
      { address: '192.168.7.5', prefix: 24 },
      'interface "eth0": gateway 10.0.0.1 is outside the subnet 192.168.7.5/24',
    ],
    [
      'an IPv4 gateway for an IPv6 address',
      { address: '2001:db8::5', prefix: 64 },
      'interface "eth0": gateway 10.0.0.1 is not of the IP family of address 2001:db8::5',
    ],
    [
      'an IPv6 gateway outside the subnet',
      { address: '2001:db8:1::5', prefix: 64, gateway: '2001:db8:2::1' },
      'interface "eth0": gateway 2001:db8:2::1 is outside the subnet 2001:db8:1::5/64',
    ],
    ['an IPv6 link-local gateway', { address: '2001:db8:1::5', prefix: 64, gateway: 'fe80::1' }, undefined],
    ['the class gateway in the subnet', { address: '10.0.0.10', prefix: 24 }, undefined],
  ])('checks the gateway against the subnet: %s', (_, address, message) => {
    const vm = aVm({ networkOverrides: [{ name: 'eth0', static: address as never }] });
    const result = computeNicAddressing(vm, aStaticClass());
    if (message === undefined) expect(result.ok).toBe(true);
    else expect(result).toEqual({ ok: false, message });
  });

  it.each(UNSAFE)('refuses a class domain with %s that an override inherits, naming the class field', (_what, domain) => {
    const vm = aVm({ networkOverrides: [{ name: 'eth0', static: { address: '10.0.0.10', prefix: 24 } }] });
    expect(computeNicAddressing(vm, aClassWith('eth0', domain))).toEqual({
      ok: false,
      message: `VMClass "small" spec.network.interfaces[0].ipam.domain ${JSON.stringify(domain)} is not a DNS name`,
    });
  });

  it.each([...UNSAFE, ['a path', '../eth0']])('refuses a class interface name with %s, naming the class field', (_what, name) => {
    expect(computeNicAddressing(aVm(), aClassWith(name))).toEqual({
      ok: false,
      message: `VMClass "small" spec.network.interfaces[0].name ${JSON.stringify(name)} is not a Linux interface name`,
    });
  });
});
