// Fixed MACs on one backend endpoint: the later machine is held back, by the rule static addresses use.
import { describe, expect, it } from 'vitest';
import type { Provider } from '../../../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { InfraMachine } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/infra-machine.js';
import { VSphereMachineKind } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/vsphere-machine.js';
import { ProxmoxMachineKind } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/proxmox-machine.js';
import { findMacInUse, macClaims, nicsFieldOf, type MacNeighbourhood } from '../../../../controller/reconcilers/infra-machine/mac-addresses.js';

const MAC = '02:00:00:0a:0b:0c';

const provider = (namespace: string, name: string, endpoint: string): Provider =>
  ({
    apiVersion: 'banlieue.io/v1alpha1',
    kind: 'Provider',
    metadata: { name, namespace, uid: `uid-${namespace}-${name}` },
    spec: { providerClassRef: { name: 'vsphere' }, connection: { endpoint } },
    status: { failureDomains: [{ name: 'dc1' }] },
  }) as Provider;

const machine = (namespace: string, name: string, created: string, spec: Record<string, unknown>, status?: Record<string, unknown>): InfraMachine =>
  ({
    apiVersion: 'infrastructure.banlieue.io/v1alpha1',
    kind: 'VSphereMachine',
    metadata: { name, namespace, uid: `uid-${namespace}-${name}`, creationTimestamp: created },
    spec,
    ...(status ? { status } : {}),
  }) as InfraMachine;

const withMac = (mac: string, providerName = 'vc'): Record<string, unknown> => ({
  providerRef: { name: providerName },
  network: [{ name: 'eth0', portGroup: 'lan', macAddress: mac }],
});

const providers: Record<string, Provider[]> = {
  a: [provider('a', 'vc', 'https://vc.example.com/sdk'), provider('a', 'other', 'https://other.example.com/sdk')],
  b: [provider('b', 'vc', 'HTTPS://VC.example.com:443/sdk/')],
};
const around = (machines: InfraMachine[]): MacNeighbourhood => ({ backend: 'vsphere', nicsField: 'network', machines, providers: (ns) => providers[ns] ?? [] });
const vcA = providers.a?.[0] as Provider;

/** An older machine `ns/name` fixing MAC and another MAC, which a provisioned machine of `vmNamespace` holds. */
const waitingBehindAVm = (ns: string, name: string, vmNamespace: string): InfraMachine[] => {
  const other = '02:00:00:0a:0b:0e';
  const network = [
    { name: 'eth0', portGroup: 'lan', macAddress: other },
    { name: 'eth1', portGroup: 'lan', macAddress: MAC },
  ];
  return [
    machine(ns, name, '2030-01-01T00:00:00Z', { providerRef: { name: 'vc' }, network }),
    machine(vmNamespace, 'vm', '2030-01-01T00:00:00Z', withMac(other), { initialization: { provisioned: true } }),
  ];
};

describe('fixed MAC addresses', () => {
  it('finds the list of interfaces in the kind schema', () => {
    expect(nicsFieldOf(VSphereMachineKind)).toBe('network');
    expect(nicsFieldOf(ProxmoxMachineKind)).toBe('nics');
  });

  it('lists the MACs a spec fixes, and none for interfaces the backend addresses', () => {
    const m = machine('a', 'm', '2030-01-01T00:00:00Z', { network: [{ name: 'eth0', macAddress: MAC }, { name: 'eth1' }] });
    expect(macClaims(m, 'network')).toEqual([{ interface: 'eth0', mac: MAC }]);
  });

  it.each<[string, InfraMachine[], string | undefined]>([
    ['no other machine', [], undefined],
    ['an older machine with another MAC', [machine('a', 'old', '2030-01-01T00:00:00Z', withMac('02:00:00:0a:0b:0d'))], undefined],
    ['an older machine with the MAC on another endpoint', [machine('a', 'old', '2030-01-01T00:00:00Z', withMac(MAC, 'other'))], undefined],
    ['an older machine with the MAC on the same Provider', [machine('a', 'old', '2030-01-01T00:00:00Z', withMac(MAC))], 'a/old'],
    [
      'an older machine of another namespace with the MAC in capitals on another Provider of the endpoint',
      [machine('b', 'old', '2030-01-01T00:00:00Z', withMac(MAC.toUpperCase()))],
      'a machine of another namespace',
    ],
    [
      'a younger machine of another namespace with the MAC, whose VM may exist',
      [machine('b', 'young', '2030-01-03T00:00:00Z', withMac(MAC), { placement: { provider: 'vc', failureDomain: 'dc1' } })],
      'a machine of another namespace',
    ],
    [
      'an older machine of another namespace with the MAC, held back behind a VM on another of its MACs',
      [...waitingBehindAVm('b', 'squatter', 'a')],
      undefined,
    ],
    ['an older machine of this namespace with the MAC, held back behind a VM on another of its MACs', [...waitingBehindAVm('a', 'waiting', 'b')], 'a/waiting'],
    ['a younger machine with the MAC and no VM', [machine('a', 'young', '2030-01-03T00:00:00Z', withMac(MAC))], undefined],
    [
      'a younger machine with the MAC whose VM may exist',
      [machine('a', 'young', '2030-01-03T00:00:00Z', withMac(MAC), { placement: { provider: 'vc', failureDomain: 'dc1' } })],
      'a/young',
    ],
  ])('with %s: held by %s', (_, others, heldBy) => {
    const m = machine('a', 'm', '2030-01-02T00:00:00Z', withMac(MAC));
    const found = findMacInUse(m, vcA, around([m, ...others]));
    expect(found && (found.heldBy ?? 'a machine of another namespace')).toBe(heldBy);
  });

  it('names the interface, the MAC, the holder of its namespace and the endpoint', () => {
    const m = machine('a', 'm', '2030-01-02T00:00:00Z', withMac(MAC));
    const found = findMacInUse(m, vcA, around([machine('a', 'old', '2030-01-01T00:00:00Z', withMac(MAC))]));
    expect(found?.message).toBe(
      `spec.network interface "eth0" MAC address ${MAC} is already held by VSphereMachine a/old on the same backend endpoint https://vc.example.com/sdk: no VM is created with it; give this machine another MAC, or none (the backend then generates one)`,
    );
  });

  it('names neither the namespace nor the machine of a holder in another namespace', () => {
    const m = machine('a', 'm', '2030-01-02T00:00:00Z', withMac(MAC));
    const holder = machine('b', 'payroll-db', '2030-01-01T00:00:00Z', withMac(MAC), { initialization: { provisioned: true } });
    const found = findMacInUse(m, vcA, around([holder]));
    expect(found?.message).toBe(
      `spec.network interface "eth0" MAC address ${MAC} is already held by a VSphereMachine of another namespace on the same backend endpoint https://vc.example.com/sdk: no VM is created with it; give this machine another MAC, or none (the backend then generates one)`,
    );
    expect(found).not.toHaveProperty('heldBy');
  });
});
