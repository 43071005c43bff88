// resolveMachinePlacement: which Provider and failure domain run an InfraMachine.
import { describe, expect, it } from 'vitest';
import type { FailureDomainStatus, Provider } from '../../../../infra/api/banlieue.io/v1alpha1/provider.js';
import { type BackendName } from '../../../../infra/api/backends.js';
import { Reason } from '../../../../infra/api/conditions.js';
import { resolveMachinePlacement, type MachinePlacementInput } from '../../../../controller/reconcilers/infra-machine/placement.js';
import { BACKEND_SAMPLES } from '../../../support/backend-samples.js';

const NS = 'team-a';

function fd(name: string): FailureDomainStatus {
  return { name, labels: { name }, attributes: { raw: { datacenter: 'dc1', cluster: name } } };
}

/** A Provider publishing `domains`; undefined: no status yet. */
function provider(name: string, domains: string[] | undefined, backend: BackendName = 'vsphere'): Provider {
  return {
    apiVersion: 'banlieue.io/v1alpha1',
    kind: 'Provider',
    metadata: { name, namespace: NS },
    spec: { providerClassRef: { name: backend }, connection: { endpoint: BACKEND_SAMPLES[backend].endpoint } },
    ...(domains ? { status: { failureDomains: domains.map(fd) } } : {}),
  };
}

function place(providers: Provider[], opts: Partial<Omit<MachinePlacementInput, 'providers'>> = {}) {
  return resolveMachinePlacement({ backend: 'vsphere', namespace: NS, providers, ...opts });
}

/** The chosen provider and failure domain names, or the reason and message. */
function summary(result: ReturnType<typeof place>) {
  return result.ok ? { provider: result.provider.metadata.name, failureDomain: result.failureDomain.name } : { reason: result.reason, message: result.message };
}

const east = provider('east', ['east-a', 'east-b']);
const west = provider('west', ['west-a']);
const kvm = provider('kvm', ['kvm-a'], 'libvirt');

describe('InfraMachine placement', () => {
  describe('with spec.providerRef', () => {
    it('runs on the named Provider, in the named failure domain', () => {
      const result = place([east, west], { providerName: 'east', failureDomain: 'east-b' });
      expect(result).toEqual({ ok: true, provider: east, failureDomain: fd('east-b') });
    });

    it('runs in the Provider’s only failure domain when none is named', () => {
      expect(summary(place([east, west], { providerName: 'west' }))).toEqual({ provider: 'west', failureDomain: 'west-a' });
    });

    it('is ProviderNotFound, naming the Provider, the field and the namespace, when the Provider does not exist', () => {
      expect(summary(place([east], { providerName: 'north', failureDomain: 'east-a' }))).toEqual({
        reason: Reason.ProviderNotFound,
        message: `Provider north (spec.providerRef) not found in namespace ${NS}`,
      });
    });

    it('is ProviderNotFound when the named Provider is of another backend', () => {
      expect(summary(place([east, kvm], { providerName: 'kvm' }))).toEqual({
        reason: Reason.ProviderNotFound,
        message: 'Provider kvm is of class libvirt, this machine needs vsphere',
      });
    });

    it('is FailureDomainNotFound, listing the Provider’s failure domains, when it does not publish the named one', () => {
      expect(summary(place([east, west], { providerName: 'east', failureDomain: 'west-a' }))).toEqual({
        reason: Reason.FailureDomainNotFound,
        message: 'Provider east publishes no failure domain west-a (it has east-a, east-b)',
      });
    });

    it('is FailureDomainNotFound when the Provider has published no failure domains yet', () => {
      for (const domains of [undefined, []]) {
        const result = summary(place([provider('fresh', domains)], { providerName: 'fresh' }));
        expect(result).toEqual({ reason: Reason.FailureDomainNotFound, message: 'Provider fresh publishes no failure domains yet' });
      }
      expect(summary(place([provider('fresh', undefined)], { providerName: 'fresh', failureDomain: 'fd-1' }))).toEqual({
        reason: Reason.FailureDomainNotFound,
        message: 'Provider fresh publishes no failure domain fd-1',
      });
    });

    it('waits with WaitingForFailureDomain, asking for spec.failureDomain, when the Provider has several', () => {
      expect(summary(place([east], { providerName: 'east' }))).toEqual({
        reason: Reason.WaitingForFailureDomain,
        message: 'Provider east has 2 failure domains: set spec.failureDomain',
      });
    });
  });

  describe("the owning CAPI Machine's failure domain", () => {
    it('wins over spec.failureDomain (InfraMachine contract: placed in the Machine’s failure domain)', () => {
      expect(summary(place([east, west], { failureDomain: 'west-a', machineFailureDomain: 'east-b' }))).toEqual({ provider: 'east', failureDomain: 'east-b' });
      expect(summary(place([east, west], { providerName: 'east', failureDomain: 'east-a', machineFailureDomain: 'east-b' }))).toEqual({
        provider: 'east',
        failureDomain: 'east-b',
      });
    });

    it('is used when spec.failureDomain is unset', () => {
      expect(summary(place([east, west], { machineFailureDomain: 'west-a' }))).toEqual({ provider: 'west', failureDomain: 'west-a' });
    });

    it('is not replaced by spec.failureDomain when no Provider publishes it', () => {
      expect(summary(place([east, west], { failureDomain: 'west-a', machineFailureDomain: 'north-a' }))).toEqual({
        reason: Reason.ProviderNotFound,
        message: `no vsphere Provider in namespace ${NS} publishes failure domain north-a`,
      });
    });
  });

  describe('without spec.providerRef', () => {
    it('runs on the one Provider of this backend that publishes the failure domain', () => {
      expect(summary(place([east, west, kvm], { failureDomain: 'west-a' }))).toEqual({ provider: 'west', failureDomain: 'west-a' });
    });

    it('is ProviderNotFound, naming backend, namespace and failure domain, when no Provider publishes it', () => {
      expect(summary(place([east, west], { failureDomain: 'north-a' }))).toEqual({
        reason: Reason.ProviderNotFound,
        message: `no vsphere Provider in namespace ${NS} publishes failure domain north-a`,
      });
    });

    it('asks for spec.providerRef, naming the Providers, when several publish the failure domain', () => {
      const twin = provider('east-twin', ['east-a']);
      const result = summary(place([east, twin], { failureDomain: 'east-a' }));
      expect(result).toEqual({
        reason: Reason.ProviderNotFound,
        message: 'failure domain east-a is published by several Providers (east, east-twin); set spec.providerRef',
      });
    });

    it('ignores Providers of other backends publishing the same failure domain', () => {
      const kvmTwin = provider('kvm-twin', ['west-a'], 'libvirt');
      expect(summary(place([kvmTwin, west], { failureDomain: 'west-a' }))).toEqual({ provider: 'west', failureDomain: 'west-a' });
      expect(summary(place([kvmTwin], { failureDomain: 'west-a' }))).toMatchObject({ reason: Reason.ProviderNotFound });
    });

    it('runs on the only Provider of this backend, in its only failure domain, when no failure domain is named', () => {
      expect(summary(place([west, kvm]))).toEqual({ provider: 'west', failureDomain: 'west-a' });
    });

    it('waits with WaitingForFailureDomain when the only Provider has several failure domains', () => {
      expect(summary(place([east, kvm]))).toEqual({
        reason: Reason.WaitingForFailureDomain,
        message: 'Provider east has 2 failure domains: set spec.failureDomain',
      });
    });

    it('waits with WaitingForFailureDomain, asking for spec.failureDomain or spec.providerRef, when several Providers could run it', () => {
      expect(summary(place([east, west]))).toEqual({
        reason: Reason.WaitingForFailureDomain,
        message: 'no failure domain yet: set spec.failureDomain or spec.providerRef',
      });
    });

    it('does not pick a Provider of another backend, even when it is the only one', () => {
      expect(place([kvm])).toMatchObject({ ok: false, reason: Reason.ProviderNotFound });
      expect(place([kvm], { failureDomain: 'kvm-a' })).toMatchObject({ ok: false, reason: Reason.ProviderNotFound });
    });
  });
});
