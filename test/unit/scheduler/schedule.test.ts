import { describe, expect, it } from 'vitest';
import type { Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { AntiAffinityTerm, VirtualMachine } from '../../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import type { PerProviderImageStatus } from '../../../infra/api/banlieue.io/v1alpha1/vm-image.js';
import { Reason } from '../../../infra/api/conditions.js';
import { schedule, type ScheduleInput, type ScheduleResult } from '../../../controller/scheduler/schedule.js';
import { NS, failureDomain, provider, readyRow, scheduleInput, virtualMachine, vmClass, vsphereDomain } from './fixtures.js';
import { vmImage } from '../../support/backend-samples.js';

const vcenterA = provider('vcenter-a', { labels: { region: 'eu' } });
const vcenterB = provider('vcenter-b', { labels: { region: 'eu' } });
const pve = provider('pve', {
  backend: 'proxmox',
  labels: { region: 'us' },
  failureDomains: [failureDomain('pve-node1', { labels: { node: 'node1' }, raw: { node: 'node1' } })],
});

/** `provider/failure-domain` of the placement, or the failure. */
function placed(result: ScheduleResult): string | { reason: string; message: string } {
  return result.ok ? `${result.placement.providerName}/${result.placement.failureDomain.name}` : { reason: result.reason, message: result.message };
}

function failure(result: ScheduleResult): { reason: string; message: string } {
  if (result.ok) throw new Error(`expected no placement, got ${result.placement.providerName}/${result.placement.failureDomain.name}`);
  return { reason: result.reason, message: result.message };
}

function withPlacement(placement: NonNullable<VirtualMachine['spec']['placement']>): VirtualMachine {
  return virtualMachine('web-2', { labels: { app: 'web' }, placement });
}

describe('VirtualMachine scheduling', () => {
  describe('placement', () => {
    it.each([
      ['in name order', [vcenterA, vcenterB]],
      ['in reverse order', [vcenterB, vcenterA]],
      ['with failure domains listed backwards', [vcenterB, provider('vcenter-a', { failureDomains: [...(vcenterA.status?.failureDomains ?? [])].reverse() })]],
    ])('places the VM in the first failure domain by (Provider name, failure-domain name) with Providers %s', (_, providers) => {
      expect(placed(schedule(scheduleInput({ providers })))).toBe('vcenter-a/vcenter-a-dc1-c1');
    });

    it('reports the Provider, its namespace and backend, and the failure domain as published', () => {
      const result = schedule(scheduleInput({ providers: [pve] }));
      expect(result).toMatchObject({
        ok: true,
        placement: { providerName: 'pve', providerNamespace: NS, providerClass: 'proxmox', failureDomain: pve.status?.failureDomains?.[0] },
      });
    });

    it('resolves every class disk and interface in class order, using per-zone targets of the chosen domain', () => {
      const vm = withPlacement({ failureDomainSelector: { matchLabels: { datacenter: 'dc2' } } });
      const result = schedule(scheduleInput({ vm, vmClass: vmClass('db', { disks: ['fast', 'standard', 'fast'], interfaces: ['prod', 'backup'] }) }));
      expect(result).toMatchObject({
        ok: true,
        placement: {
          failureDomain: { name: 'vcenter-a-dc2-c1' },
          resolvedStorage: [
            { className: 'fast', backendId: 'ds-dc2-ssd' },
            { className: 'standard', backendId: 'ds-hdd' },
            { className: 'fast', backendId: 'ds-dc2-ssd' },
          ],
          resolvedNetworks: [
            { className: 'prod', backendId: 'pg-prod' },
            { className: 'backup', backendId: 'dvpg-backup' },
          ],
        },
      });
    });

    it.each<[string, Partial<ScheduleInput>, string]>([
      ['providerSelector', { vm: withPlacement({ providerSelector: { matchLabels: { region: 'us' } } }), providers: [vcenterA, pve] }, 'pve/pve-node1'],
      [
        'failureDomainSelector',
        { vm: withPlacement({ failureDomainSelector: { matchExpressions: [{ key: 'cluster', operator: 'In', values: ['c2'] }] } }) },
        'vcenter-a/vcenter-a-dc1-c2',
      ],
      ['a paused Provider', { providers: [provider('vcenter-a', { paused: true }), vcenterB] }, 'vcenter-b/vcenter-b-dc1-c1'],
      [
        'the image being ready only on one Provider',
        { providers: [vcenterA, vcenterB], image: vmImage('ubuntu-24.04', { rows: [readyRow(vcenterB)] }) },
        'vcenter-b/vcenter-b-dc1-c1',
      ],
      [
        'the image having no source for a backend',
        { providers: [vcenterA, pve], image: vmImage('ubuntu-24.04', { backends: ['proxmox'], rows: [readyRow(vcenterA), readyRow(pve)] }) },
        'pve/pve-node1',
      ],
      [
        'storage classes',
        {
          providers: [
            provider('vcenter-a', {
              failureDomains: [vsphereDomain('vcenter-a', 'dc1', 'c1', { storage: ['standard'] }), vsphereDomain('vcenter-a', 'dc1', 'c2')],
            }),
          ],
        },
        'vcenter-a/vcenter-a-dc1-c2',
      ],
      [
        'network classes',
        {
          providers: [
            provider('vcenter-a', {
              failureDomains: [vsphereDomain('vcenter-a', 'dc1', 'c1', { networks: ['backup'] }), vsphereDomain('vcenter-a', 'dc1', 'c2')],
            }),
          ],
        },
        'vcenter-a/vcenter-a-dc1-c2',
      ],
      [
        'class features',
        {
          vmClass: vmClass('nested', { features: ['nestedVirtualization'] }),
          providers: [
            provider('vcenter-a', {
              failureDomains: [vsphereDomain('vcenter-a', 'dc1', 'c1'), vsphereDomain('vcenter-a', 'dc1', 'c2', { features: ['nestedVirtualization'] })],
            }),
          ],
        },
        'vcenter-a/vcenter-a-dc1-c2',
      ],
      [
        'efi-secure firmware',
        {
          vmClass: vmClass('secure', { firmware: 'efi-secure' }),
          providers: [
            provider('vcenter-a', { failureDomains: [vsphereDomain('vcenter-a', 'dc1', 'c1', { features: [] }), vsphereDomain('vcenter-a', 'dc1', 'c2')] }),
          ],
        },
        'vcenter-a/vcenter-a-dc1-c2',
      ],
    ])('honours %s', (_, overrides, expected) => {
      expect(placed(schedule(scheduleInput(overrides)))).toBe(expected);
    });
  });

  describe('when no Provider fits', () => {
    it.each<[string, Partial<ScheduleInput>, string]>([
      ['there is no Provider', { providers: [] }, 'No Provider exists in namespace team-a'],
      [
        'the selector matches none',
        { vm: withPlacement({ providerSelector: { matchLabels: { region: 'mars' } } }), providers: [vcenterA, pve] },
        'spec.placement.providerSelector region=mars matches none of the 2 Providers in namespace team-a',
      ],
      [
        'every matching Provider is paused',
        {
          vm: withPlacement({ providerSelector: { matchLabels: { region: 'eu' } } }),
          providers: [provider('vcenter-b', { labels: { region: 'eu' }, paused: true }), pve],
        },
        'Every Provider matching spec.placement.providerSelector in namespace team-a is paused or being deleted: vcenter-b',
      ],
    ])('marks NoProviderMatched when %s', (_, overrides, message) => {
      expect(failure(schedule(scheduleInput(overrides)))).toEqual({ reason: Reason.NoProviderMatched, message });
    });
  });

  describe('when no failure domain fits', () => {
    const single = (props: Parameters<typeof vsphereDomain>[3]): Provider[] => [
      provider('vcenter-a', { failureDomains: [vsphereDomain('vcenter-a', 'dc1', 'c1', props)] }),
    ];

    it('marks NoFailureDomainMatched while the Providers publish no failure domains', () => {
      const providers = [provider('vcenter-a', { failureDomains: [] }), provider('vcenter-b', { failureDomains: [] })];
      expect(failure(schedule(scheduleInput({ providers })))).toEqual({
        reason: Reason.NoFailureDomainMatched,
        message: 'The matching Providers publish no failure domains yet: vcenter-a, vcenter-b',
      });
    });

    it.each<[string, Partial<ScheduleInput>, string]>([
      [
        'the failureDomainSelector',
        { vm: withPlacement({ failureDomainSelector: { matchLabels: { datacenter: 'dc9' } } }), providers: single({}) },
        'labels do not match spec.placement.failureDomainSelector',
      ],
      ['a storage class', { providers: single({ storage: ['standard'] }) }, 'storage class "fast" not available'],
      [
        'several storage classes',
        { vmClass: vmClass('db', { disks: ['fast', 'nvme', 'fast'] }), providers: single({ storage: ['standard'] }) },
        'storage classes "fast", "nvme" not available',
      ],
      ['a network class', { vmClass: vmClass('dual', { interfaces: ['prod', 'dmz'] }), providers: single({}) }, 'network class "dmz" not available'],
      ['a feature', { vmClass: vmClass('gpu', { features: ['gpuPassthrough'] }), providers: single({}) }, 'feature "gpuPassthrough" not available'],
      [
        'the first check failing',
        { vmClass: vmClass('gpu', { disks: ['nvme'], features: ['gpuPassthrough'] }), providers: single({}) },
        'storage class "nvme" not available',
      ],
      [
        'efi-secure firmware after another check',
        { vmClass: vmClass('secure', { firmware: 'efi-secure', disks: ['nvme'] }), providers: single({ features: [] }) },
        'storage class "nvme" not available',
      ],
    ])('marks NoFailureDomainMatched naming %s', (_, overrides, why) => {
      expect(failure(schedule(scheduleInput(overrides)))).toEqual({
        reason: Reason.NoFailureDomainMatched,
        message: `No failure domain fits: vcenter-a/vcenter-a-dc1-c1: ${why}`,
      });
    });

    it('lists every candidate, in (Provider, failure domain) order, with the image rejection of a Provider', () => {
      const withoutFast = provider('vcenter-a', { failureDomains: [vsphereDomain('vcenter-a', 'dc1', 'c1', { storage: [] })] });
      const image = vmImage('ubuntu-24.04', { rows: [readyRow(withoutFast)] });
      expect(failure(schedule(scheduleInput({ providers: [vcenterB, withoutFast], image })))).toEqual({
        reason: Reason.NoFailureDomainMatched,
        message:
          'No failure domain fits: vcenter-a/vcenter-a-dc1-c1: storage class "fast" not available; ' +
          'vcenter-b/vcenter-b-dc1-c1: VMImage "ubuntu-24.04" not reported by the Provider yet; ' +
          'vcenter-b/vcenter-b-dc1-c2: VMImage "ubuntu-24.04" not reported by the Provider yet; ' +
          'vcenter-b/vcenter-b-dc2-c1: VMImage "ubuntu-24.04" not reported by the Provider yet',
      });
    });

    it('lists at most 10 candidates and counts the rest', () => {
      const domains = Array.from({ length: 13 }, (_, i) => vsphereDomain('vcenter-a', 'dc1', `c${String(i + 10)}`, { storage: [] }));
      const { message } = failure(schedule(scheduleInput({ providers: [provider('vcenter-a', { failureDomains: domains })] })));
      const entries = message.replace('No failure domain fits: ', '').split('; ');
      expect(entries).toHaveLength(11);
      expect(entries[0]).toBe('vcenter-a/vcenter-a-dc1-c10: storage class "fast" not available');
      expect(entries[9]).toBe('vcenter-a/vcenter-a-dc1-c19: storage class "fast" not available');
      expect(entries[10]).toBe('... and 3 more');
    });
  });

  describe('when the image is not ready', () => {
    const notReady: PerProviderImageStatus = { ...readyRow(vcenterA), ready: false, reason: 'ImportFailed', message: 'datastore ds-ssd is full' };

    it.each<[string, Partial<ScheduleInput>, string]>([
      ['no Provider reported it', { image: vmImage('ubuntu-24.04') }, 'vcenter-a: not reported by the Provider yet'],
      [
        'a Provider reported it not ready',
        { image: vmImage('ubuntu-24.04', { rows: [notReady] }) },
        'vcenter-a: not ready (ImportFailed: datastore ds-ssd is full)',
      ],
      [
        'it has no source for the backend',
        { image: vmImage('ubuntu-24.04', { backends: ['libvirt'], rows: [readyRow(vcenterA)] }) },
        'vcenter-a: no source for backend vsphere',
      ],
      [
        'it is ready only on a Provider the selector excludes',
        {
          vm: withPlacement({ providerSelector: { matchLabels: { region: 'us' } } }),
          providers: [vcenterA, pve],
          image: vmImage('ubuntu-24.04', { rows: [readyRow(vcenterA)] }),
        },
        'pve: not reported by the Provider yet',
      ],
      [
        'it is ready on no Provider, even when Secure Boot is missing too',
        {
          vmClass: vmClass('secure', { firmware: 'efi-secure' }),
          providers: [provider('vcenter-a', { failureDomains: [vsphereDomain('vcenter-a', 'dc1', 'c1', { features: [] })] })],
          image: vmImage('ubuntu-24.04'),
        },
        'vcenter-a: not reported by the Provider yet',
      ],
    ])('marks ImageNotReady when %s', (_, overrides, why) => {
      expect(failure(schedule(scheduleInput(overrides)))).toEqual({
        reason: Reason.ImageNotReady,
        message: `VMImage "ubuntu-24.04" is not ready on any matching Provider: ${why}`,
      });
    });
  });

  describe('when the class needs Secure Boot', () => {
    it('marks FirmwareUnsupported when the failure domains that fit otherwise lack efiSecureBoot', () => {
      const providers = [
        provider('vcenter-a', {
          failureDomains: [
            vsphereDomain('vcenter-a', 'dc1', 'c1', { features: ['vtpm'] }),
            vsphereDomain('vcenter-a', 'dc1', 'c2', { features: ['efiSecureBoot'], storage: [] }),
          ],
        }),
      ];
      expect(failure(schedule(scheduleInput({ providers, vmClass: vmClass('secure', { firmware: 'efi-secure' }) })))).toEqual({
        reason: Reason.FirmwareUnsupported,
        message:
          'VMClass "secure" needs efi-secure firmware, but the failure domains that fit otherwise lack feature "efiSecureBoot": vcenter-a/vcenter-a-dc1-c1',
      });
    });
  });

  describe('with required anti-affinity', () => {
    const web = (name: string, on?: readonly [string, string]): VirtualMachine =>
      virtualMachine(name, { labels: { app: 'web' }, ...(on ? { scheduledOn: on } : {}) });
    const apart = (topologyKey: string, mode: AntiAffinityTerm['mode'] = 'required'): AntiAffinityTerm => ({
      topologyKey,
      labelSelector: { matchLabels: { app: 'web' } },
      mode,
    });
    const vm = (...terms: AntiAffinityTerm[]): VirtualMachine => withPlacement({ antiAffinity: terms });
    const racked = provider('vcenter-a', {
      failureDomains: [vsphereDomain('vcenter-a', 'dc1', 'c1', { labels: { rack: 'r1' } }), vsphereDomain('vcenter-a', 'dc1', 'c2')],
    });

    it.each<[string, Partial<ScheduleInput>, string]>([
      [
        'skips every domain sharing a datacenter with a matching VM',
        { vm: vm(apart('datacenter')), siblings: [web('web-0', ['vcenter-a', 'vcenter-a-dc1-c1'])] },
        'vcenter-a/vcenter-a-dc2-c1',
      ],
      [
        'skips only the domain itself for topologyKey name',
        { vm: vm(apart('name')), siblings: [web('web-0', ['vcenter-a', 'vcenter-a-dc1-c1'])] },
        'vcenter-a/vcenter-a-dc1-c2',
      ],
      [
        'counts a matching VM on a Provider this VM may not use',
        {
          vm: withPlacement({ providerSelector: { matchLabels: { region: 'eu' } }, antiAffinity: [apart('datacenter')] }),
          providers: [vcenterA, provider('vcenter-x', { labels: { region: 'us' } })],
          siblings: [web('web-0', ['vcenter-x', 'vcenter-x-dc1-c2'])],
        },
        'vcenter-a/vcenter-a-dc2-c1',
      ],
      [
        'ignores VMs the labelSelector does not match',
        { vm: vm(apart('datacenter')), siblings: [virtualMachine('db-0', { labels: { app: 'db' }, scheduledOn: ['vcenter-a', 'vcenter-a-dc1-c1'] })] },
        'vcenter-a/vcenter-a-dc1-c1',
      ],
      ['ignores VMs not scheduled yet', { vm: vm(apart('datacenter')), siblings: [web('web-0')] }, 'vcenter-a/vcenter-a-dc1-c1'],
      [
        'ignores the VM itself among the siblings',
        { vm: vm(apart('datacenter')), siblings: [web('web-2', ['vcenter-a', 'vcenter-a-dc1-c1'])] },
        'vcenter-a/vcenter-a-dc1-c1',
      ],
      [
        'ignores preferred terms',
        { vm: vm(apart('datacenter', 'preferred')), siblings: [web('web-0', ['vcenter-a', 'vcenter-a-dc1-c1'])] },
        'vcenter-a/vcenter-a-dc1-c1',
      ],
      [
        'ignores VMs whose failure domain is no longer published',
        { vm: vm(apart('datacenter')), siblings: [web('web-0', ['vcenter-a', 'vcenter-a-dc9-c1'])] },
        'vcenter-a/vcenter-a-dc1-c1',
      ],
      [
        'does not block a domain without the topology label',
        {
          vm: vm(apart('rack')),
          providers: [racked],
          image: vmImage('ubuntu-24.04', { rows: [readyRow(racked)] }),
          siblings: [web('web-0', ['vcenter-a', 'vcenter-a-dc1-c1'])],
        },
        'vcenter-a/vcenter-a-dc1-c2',
      ],
      [
        'lets a VM on a domain without the topology label block nothing',
        {
          vm: vm(apart('rack')),
          providers: [racked],
          image: vmImage('ubuntu-24.04', { rows: [readyRow(racked)] }),
          siblings: [web('web-0', ['vcenter-a', 'vcenter-a-dc1-c2'])],
        },
        'vcenter-a/vcenter-a-dc1-c1',
      ],
    ])('%s', (_, overrides, expected) => {
      expect(placed(schedule(scheduleInput(overrides)))).toBe(expected);
    });

    it.each<[string, Partial<ScheduleInput>, string]>([
      [
        'every datacenter holds a matching VM',
        {
          vm: vm(apart('datacenter')),
          siblings: [
            web('web-0', ['vcenter-a', 'vcenter-a-dc1-c2']),
            web('web-1', ['vcenter-a', 'vcenter-a-dc2-c1']),
            web('web-3', ['vcenter-a', 'vcenter-a-dc1-c1']),
          ],
        },
        'spec.placement.antiAffinity[0] (topologyKey "datacenter", labelSelector app=web) leaves no failure domain: ' +
          'datacenter values taken by matching VirtualMachines: "dc1" (web-0, web-3), "dc2" (web-1)',
      ],
      [
        'a second term removes what the first left',
        {
          vm: vm(apart('datacenter'), { topologyKey: 'name', labelSelector: { matchExpressions: [{ key: 'tier', operator: 'Exists' }] }, mode: 'required' }),
          siblings: [
            web('web-0', ['vcenter-a', 'vcenter-a-dc1-c1']),
            virtualMachine('lb-0', { labels: { tier: 'edge' }, scheduledOn: ['vcenter-a', 'vcenter-a-dc2-c1'] }),
          ],
        },
        'spec.placement.antiAffinity[1] (topologyKey "name", labelSelector tier) leaves no failure domain: ' +
          'name values taken by matching VirtualMachines: "vcenter-a-dc2-c1" (lb-0)',
      ],
    ])('marks AntiAffinityUnsatisfied when %s', (_, overrides, message) => {
      expect(failure(schedule(scheduleInput(overrides)))).toEqual({ reason: Reason.AntiAffinityUnsatisfied, message });
    });
  });
});
