import { describe, expect, it } from 'vitest';
import type { FailureDomainStatus, Provider } from '../../../../infra/api/banlieue.io/v1alpha1/provider.js';
import { type BackendName } from '../../../../infra/api/backends.js';
import { BACKEND_APIS } from '../../../../infra/api/backends.js';
import type { InfraCluster, InfraClusterSpec, InfraClusterStatus } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/infra-cluster.js';
import { ConditionType, Reason } from '../../../../infra/api/conditions.js';
import { Annotation } from '../../../../infra/api/well-known.js';
import { findCondition } from '../../../../controller/runtime/conditions.js';
import { MAX_CLUSTER_FAILURE_DOMAINS, decideInfraClusterStatus } from '../../../../controller/reconcilers/infra-cluster/decide.js';
import { isPaused, pausedCondition } from '../../../../controller/reconcilers/paused.js';

const NS = 'team-a';
const T0 = new Date('2025-01-01T00:00:00.000Z');
const T1 = new Date('2025-01-01T00:05:00.000Z');

function fd(name: string, labels: Record<string, string> = {}): FailureDomainStatus {
  return { name, labels: { name, ...labels } };
}

function provider(name: string, failureDomains: FailureDomainStatus[], labels: Record<string, string> = {}, backend: BackendName = 'libvirt'): Provider {
  return {
    apiVersion: 'banlieue.io/v1alpha1',
    kind: 'Provider',
    metadata: { name, namespace: NS, labels },
    spec: { providerClassRef: { name: backend }, connection: { endpoint: 'https://host.example' } },
    status: { failureDomains },
  };
}

/** The status of a LibvirtCluster (the `cluster()` fixture's kind). */
const decide = (c: InfraCluster, providers: readonly Provider[], now: Date, pausedCluster?: string): InfraClusterStatus =>
  decideInfraClusterStatus(c, 'libvirt', providers, now, pausedCluster);

function cluster(
  spec: InfraClusterSpec = {},
  opts: { status?: InfraClusterStatus; annotations?: Record<string, string>; generation?: number } = {},
): InfraCluster {
  return {
    apiVersion: 'infrastructure.banlieue.io/v1alpha1',
    kind: 'LibvirtCluster',
    metadata: {
      name: 'c1',
      namespace: NS,
      generation: opts.generation ?? 3,
      ...(opts.annotations ? { annotations: opts.annotations } : {}),
    },
    spec,
    ...(opts.status ? { status: opts.status } : {}),
  };
}

const east = provider('east', [fd('east-a', { zone: 'a', tier: 'cp' }), fd('east-b', { zone: 'b' }), fd('east-c', { zone: 'c' })], {
  region: 'east',
});
const west = provider('west', [fd('west-a', { zone: 'a', tier: 'cp' }), fd('west-b', { zone: 'b' }), fd('west-c', { zone: 'c' })], {
  region: 'west',
});

const names = (status: InfraClusterStatus): string[] => (status.failureDomains ?? []).map((f) => f.name);
const ready = (status: InfraClusterStatus) => findCondition(status.conditions, ConditionType.Ready);

describe('InfraCluster status', () => {
  describe('failure domains', () => {
    it('publishes six failure domains from two Providers of three each, sorted by name', () => {
      const status = decide(cluster(), [west, east], T0);
      expect(names(status)).toEqual(['east-a', 'east-b', 'east-c', 'west-a', 'west-b', 'west-c']);
      expect(status.initialization).toEqual({ provisioned: true });
      expect(ready(status)).toMatchObject({
        status: 'True',
        reason: Reason.Reconciled,
        message: '6 failure domains from 2 Providers',
        observedGeneration: 3,
      });
      expect(status.observedGeneration).toBe(3);
    });

    it('carries the failure domain labels and the Provider name in attributes', () => {
      const status = decide(cluster(), [east], T0);
      expect(status.failureDomains?.[0]).toEqual({
        name: 'east-a',
        controlPlane: true,
        attributes: { name: 'east-a', zone: 'a', tier: 'cp', provider: 'east' },
      });
    });

    it('marks every failure domain control-plane eligible when no selector is set', () => {
      const status = decide(cluster(), [east, west], T0);
      expect(status.failureDomains?.every((f) => f.controlPlane === true)).toBe(true);
    });

    it('marks control-plane eligibility by spec.controlPlaneFailureDomainSelector', () => {
      const status = decide(cluster({ controlPlaneFailureDomainSelector: { matchLabels: { tier: 'cp' } } }), [east, west], T0);
      const eligible = (status.failureDomains ?? []).filter((f) => f.controlPlane).map((f) => f.name);
      expect(eligible).toEqual(['east-a', 'west-a']);
      expect(status.failureDomains?.find((f) => f.name === 'east-b')?.controlPlane).toBe(false);
    });

    it('keeps the failure domain of the first Provider by name when two publish the same name', () => {
      const a = provider('a', [fd('shared', { from: 'a' })]);
      const b = provider('b', [fd('shared', { from: 'b' }), fd('only-b')]);
      for (const order of [
        [a, b],
        [b, a],
      ]) {
        const status = decide(cluster(), order, T0);
        expect(names(status)).toEqual(['only-b', 'shared']);
        expect(status.failureDomains?.[1]?.attributes).toMatchObject({ from: 'a', provider: 'a' });
        expect(ready(status)?.message).toContain('duplicate names ignored: shared (Provider b)');
      }
    });

    it(`caps the list at ${MAX_CLUSTER_FAILURE_DOMAINS} and says so`, () => {
      const many = Array.from({ length: 130 }, (_, i) => fd(`fd-${String(i).padStart(3, '0')}`));
      const status = decide(cluster(), [provider('big', many)], T0);
      expect(status.failureDomains).toHaveLength(MAX_CLUSTER_FAILURE_DOMAINS);
      expect(names(status).at(-1)).toBe('fd-099');
      expect(ready(status)).toMatchObject({ status: 'True', reason: Reason.Reconciled });
      expect(ready(status)?.message).toContain('capped at 100 of 130 failure domains');
    });
  });

  describe('Provider selection', () => {
    const labelledCp = provider('cp', [fd('cp-a')], { role: 'cp' });

    it('uses every Provider of the namespace when spec.providerSelector is empty or unset', () => {
      for (const spec of [{}, { providerSelector: {} }]) {
        expect(names(decide(cluster(spec), [east, west, labelledCp], T0))).toHaveLength(7);
      }
    });

    it('filters Providers by spec.providerSelector', () => {
      const status = decide(cluster({ providerSelector: { matchLabels: { region: 'west' } } }), [east, west], T0);
      expect(names(status)).toEqual(['west-a', 'west-b', 'west-c']);
      expect(ready(status)?.message).toBe('3 failure domains from 1 Provider');
    });

    it('uses exactly spec.providerRefs when non-empty, ignoring spec.providerSelector', () => {
      const status = decide(cluster({ providerRefs: [{ name: 'east' }], providerSelector: { matchLabels: { region: 'west' } } }), [east, west], T0);
      expect(names(status)).toEqual(['east-a', 'east-b', 'east-c']);
    });

    it('falls back to spec.providerSelector when spec.providerRefs is empty', () => {
      const status = decide(cluster({ providerRefs: [], providerSelector: { matchLabels: { region: 'west' } } }), [east, west], T0);
      expect(names(status)).toEqual(['west-a', 'west-b', 'west-c']);
    });

    it('names a missing providerRef in the Ready message and publishes the others', () => {
      const status = decide(cluster({ providerRefs: [{ name: 'east' }, { name: 'ghost' }] }), [east, west], T0);
      expect(names(status)).toEqual(['east-a', 'east-b', 'east-c']);
      expect(ready(status)).toMatchObject({ status: 'True', reason: Reason.Reconciled });
      expect(ready(status)?.message).toBe('3 failure domains from 1 Provider; spec.providerRefs not found: ghost');
    });

    it.each([
      ['no Provider exists', {}, [], 'No libvirt Provider exists in namespace team-a'],
      [
        'spec.providerSelector matches none',
        { providerSelector: { matchLabels: { region: 'north' } } },
        [east],
        'No libvirt Provider in namespace team-a matches spec.providerSelector',
      ],
      [
        'no spec.providerRefs name exists',
        { providerRefs: [{ name: 'ghost' }, { name: 'phantom' }] },
        [east],
        'No libvirt Provider named in spec.providerRefs exists in namespace team-a: ghost, phantom',
      ],
    ] satisfies [string, InfraClusterSpec, Provider[], string][])('marks Ready False with NoProviders when %s', (_, spec, providers, message) => {
      const status = decide(cluster(spec), providers, T0);
      expect(ready(status)).toMatchObject({ status: 'False', reason: Reason.NoProviders, message });
      expect(status.failureDomains).toBeUndefined();
      expect(status.initialization).toEqual({ provisioned: false });
    });

    it('marks Ready False while the selected Providers publish no failure domains', () => {
      const status = decide(cluster(), [provider('empty', [])], T0);
      expect(ready(status)).toMatchObject({ status: 'False', reason: Reason.NoFailureDomainMatched });
      expect(ready(status)?.message).toContain('empty');
      expect(status.initialization).toEqual({ provisioned: false });
    });
  });

  describe('backend', () => {
    // One Provider of every backend, all labelled alike, in one namespace.
    const mixed = BACKEND_APIS.map((b) => provider(`${b.name}-site`, [fd(`${b.name}-fd`)], { site: 'paris' }, b.name));

    it.each(BACKEND_APIS.map((b) => [b.cluster.kind, b.name] as const))(
      'publishes to a %s only the failure domains of %s Providers, whatever selects them',
      (kind, backend) => {
        for (const spec of [{}, { providerSelector: { matchLabels: { site: 'paris' } } }] satisfies InfraClusterSpec[]) {
          const status = decideInfraClusterStatus({ ...cluster(spec), kind }, backend, mixed, T0);
          expect(names(status), JSON.stringify(spec)).toEqual([`${backend}-fd`]);
          expect(status.failureDomains?.[0]?.attributes?.provider).toBe(`${backend}-site`);
          expect(ready(status)).toMatchObject({ status: 'True', message: '1 failure domain from 1 Provider' });
        }
      },
    );

    it('ignores a spec.providerRefs entry naming a Provider of another backend, and says so', () => {
      const status = decideInfraClusterStatus(cluster({ providerRefs: [{ name: 'libvirt-site' }, { name: 'proxmox-site' }] }), 'libvirt', mixed, T0);
      expect(names(status)).toEqual(['libvirt-fd']);
      expect(ready(status)?.message).toBe('1 failure domain from 1 Provider; spec.providerRefs not of class libvirt, ignored: proxmox-site (proxmox)');
      const none = decideInfraClusterStatus(cluster({ providerRefs: [{ name: 'vsphere-site' }] }), 'libvirt', mixed, T0);
      expect(ready(none)).toMatchObject({
        status: 'False',
        reason: Reason.NoProviders,
        message:
          'No libvirt Provider named in spec.providerRefs exists in namespace team-a; spec.providerRefs not of class libvirt, ignored: vsphere-site (vsphere)',
      });
      expect(none.failureDomains).toBeUndefined();
    });

    it('is NoProviders, naming the backend, when only Providers of other backends exist', () => {
      const status = decideInfraClusterStatus(
        cluster(),
        'libvirt',
        mixed.filter((p) => p.spec.providerClassRef.name !== 'libvirt'),
        T0,
      );
      expect(ready(status)).toMatchObject({ status: 'False', reason: Reason.NoProviders, message: 'No libvirt Provider exists in namespace team-a' });
    });
  });

  describe('contract fields', () => {
    it('echoes spec.controlPlaneEndpoint', () => {
      const endpoint = { host: '10.0.0.10', port: 6443 };
      expect(decide(cluster({ controlPlaneEndpoint: endpoint }), [east], T0).controlPlaneEndpoint).toEqual(endpoint);
      expect(decide(cluster(), [east], T0).controlPlaneEndpoint).toBeUndefined();
    });

    it('keeps initialization.provisioned true once set, even when the failure domains go away', () => {
      const first = decide(cluster(), [east], T0);
      const later = decide(cluster({}, { status: first }), [], T1);
      expect(later.initialization).toEqual({ provisioned: true });
      expect(later.failureDomains).toBeUndefined();
      expect(ready(later)).toMatchObject({ status: 'False', reason: Reason.NoProviders });
    });
  });

  describe('pause', () => {
    const published = decide(cluster(), [east], T0);

    it.each([
      ['spec.paused', cluster({ paused: true }, { status: published }), 'spec.paused is true'],
      [
        'the cluster.x-k8s.io/paused annotation',
        cluster({}, { status: published, annotations: { [Annotation.capiPaused]: '' } }),
        `annotation ${Annotation.capiPaused} is set`,
      ],
    ])('changes only Paused and Ready when paused by %s', (_, paused, why) => {
      const status = decide(paused, [east, west], T1);
      expect(findCondition(status.conditions, ConditionType.Paused)).toMatchObject({
        status: 'True',
        reason: Reason.Paused,
        message: `Reconciliation is paused: ${why}`,
      });
      expect(ready(status)).toMatchObject({ status: 'False', reason: Reason.Paused });
      // west's failure domains are not added while paused.
      expect({ ...status, conditions: undefined }).toEqual({ ...published, conditions: undefined });
    });

    it('pauses, naming it, when the owning CAPI Cluster has spec.paused (clusterctl move)', () => {
      const status = decide(cluster({}, { status: published }), [east, west], T1, 'work');
      expect(findCondition(status.conditions, ConditionType.Paused)).toMatchObject({
        status: 'True',
        message: 'Reconciliation is paused: Cluster work has spec.paused',
      });
      expect({ ...status, conditions: undefined }).toEqual({ ...published, conditions: undefined });
    });

    it('names both when spec.paused and the annotation are set', () => {
      const both = cluster({ paused: true }, { annotations: { [Annotation.capiPaused]: 'true' } });
      expect(isPaused(both)).toBe(true);
      expect(pausedCondition(both).message).toBe(`Reconciliation is paused: spec.paused is true and annotation ${Annotation.capiPaused} is set`);
    });

    it('marks Paused False with NotPaused when neither is set', () => {
      const status = decide(cluster({ paused: false }), [east], T0);
      expect(findCondition(status.conditions, ConditionType.Paused)).toMatchObject({
        status: 'False',
        reason: Reason.NotPaused,
        observedGeneration: 3,
      });
      expect(pausedCondition(false)).toMatchObject({ status: 'False', reason: Reason.NotPaused });
    });

    it('resumes publishing when unpaused', () => {
      const paused = decide(cluster({ paused: true }), [east], T0);
      const resumed = decide(cluster({}, { status: paused }), [east], T1);
      expect(names(resumed)).toEqual(['east-a', 'east-b', 'east-c']);
      expect(findCondition(resumed.conditions, ConditionType.Paused)?.lastTransitionTime).toBe('2025-01-01T00:05:00Z');
    });
  });

  describe('idempotence', () => {
    it.each([
      ['reconciled', cluster({ controlPlaneEndpoint: { host: 'cp.example', port: 6443 } }), [east, west]],
      ['without Providers', cluster(), []],
      ['paused', cluster({ paused: true }), [east]],
    ] satisfies [string, InfraCluster, Provider[]][])('returns a deep-equal status when run again on its own output (%s)', (_, initial, providers) => {
      const first = decide(initial, providers, T0);
      const second = decide({ ...initial, status: first }, providers, T1);
      expect(second).toEqual(first);
      expect(JSON.stringify(second)).toBe(JSON.stringify(first));
    });

    it('does not depend on the order of the Provider list', () => {
      expect(decide(cluster(), [west, east], T0)).toEqual(decide(cluster(), [east, west], T0));
    });

    it('keeps lastTransitionTime of unchanged conditions and moves it on a status change', () => {
      const first = decide(cluster(), [], T0);
      const second = decide(cluster({}, { status: first }), [east], T1);
      expect(findCondition(second.conditions, ConditionType.Paused)?.lastTransitionTime).toBe('2025-01-01T00:00:00Z');
      expect(ready(second)?.lastTransitionTime).toBe('2025-01-01T00:05:00Z');
    });
  });
});
