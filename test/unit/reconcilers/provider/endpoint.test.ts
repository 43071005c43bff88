// One backend endpoint however a Provider spells it, and which of two Providers naming one is told.
import { describe, expect, it } from 'vitest';
import type { Provider } from '../../../../infra/api/banlieue.io/v1alpha1/provider.js';
import { findOlderOnEndpoint, normalizedEndpoint, sameEndpoint } from '../../../../controller/reconcilers/provider/endpoint.js';

const provider = (namespace: string, name: string, endpoint: string, creationTimestamp: string): Provider =>
  ({
    apiVersion: 'banlieue.io/v1alpha1',
    kind: 'Provider',
    metadata: { name, namespace, uid: `uid-${namespace}-${name}`, creationTimestamp },
    spec: { providerClassRef: { name: 'vsphere' }, connection: { endpoint } },
  }) as Provider;

describe('backend endpoints', () => {
  it.each([
    ['scheme and host in capitals, the default port written out, a trailing slash', 'https://vc.example.com/sdk', 'HTTPS://VC.Example.com:443/sdk/'],
    ['a Proxmox endpoint with and without a trailing slash', 'https://pve.example.com:8006', 'https://PVE.example.com:8006/'],
    ['a libvirt host over TLS, its default port written out', 'qemu+tls://Host-A/system', 'qemu+tls://host-a:16514/system'],
    ['a libvirt host over SSH as two users', 'qemu+ssh://ops@host-a/system', 'qemu+ssh://admin@HOST-A:22/system'],
    ['a Cloud Hypervisor host directory', 'unix://host-a/var/lib/ch', 'unix://HOST-A/var/lib/ch/'],
  ])('takes %s for one endpoint', (_, a, b) => {
    expect(normalizedEndpoint(a)).toBe(normalizedEndpoint(b));
    expect(sameEndpoint(a, b)).toBe(true);
  });

  it.each([
    ['two vCenters', 'https://vc-a.example.com/sdk', 'https://vc-b.example.com/sdk'],
    ['one host on two ports', 'https://pve.example.com:8006', 'https://pve.example.com:8007'],
    ['the system and session libvirt daemons', 'qemu+tls://host-a/system', 'qemu+tls://host-a/session'],
    ['two transports to one host', 'qemu+tls://host-a/system', 'qemu+tcp://host-a/system'],
  ])('tells %s apart', (_, a, b) => {
    expect(sameEndpoint(a, b)).toBe(false);
  });

  it('tells the later of two Providers on one endpoint about the older, whatever namespace it is in; the older is told nothing', () => {
    const first = provider('team-a', 'vc', 'https://vc.example.com/sdk', '2030-01-01T00:00:00Z');
    const second = provider('team-b', 'vc', 'https://VC.example.com:443/sdk', '2030-01-02T00:00:00Z');
    const third = provider('team-c', 'vc', 'https://vc.example.com/sdk/', '2030-01-03T00:00:00Z');
    const elsewhere = provider('team-d', 'other', 'https://other.example.com/sdk', '2029-01-01T00:00:00Z');
    const all = [third, elsewhere, second, first];
    expect(findOlderOnEndpoint(first, all)).toBeUndefined();
    expect(findOlderOnEndpoint(second, all)?.metadata.namespace).toBe('team-a');
    expect(findOlderOnEndpoint(third, all)?.metadata.namespace).toBe('team-a');
    expect(findOlderOnEndpoint(elsewhere, all)).toBeUndefined();
  });

  it('orders two Providers created in the same second by namespace and name', () => {
    const a = provider('team-a', 'vc', 'https://vc.example.com/sdk', '2030-01-01T00:00:00Z');
    const b = provider('team-b', 'vc', 'https://vc.example.com/sdk', '2030-01-01T00:00:00Z');
    expect(findOlderOnEndpoint(a, [a, b])).toBeUndefined();
    expect(findOlderOnEndpoint(b, [a, b])?.metadata.namespace).toBe('team-a');
  });
});
