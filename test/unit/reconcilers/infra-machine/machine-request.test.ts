// What a machine's pass hands its backend of the Provider: the backend's own settings block
// (spec.<backend>), as the Provider's owner wrote it, and nothing when there is none.
import { describe, expect, it } from 'vitest';
import type { Provider } from '../../../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { InfraMachine } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/infra-machine.js';
import { toMachineRequest, type FoundPlacement } from '../../../../controller/reconcilers/infra-machine/machine-request.js';

function provider(backend: string, settings: Record<string, unknown>): Provider {
  return {
    apiVersion: 'banlieue.io/v1alpha1',
    kind: 'Provider',
    metadata: { name: 'north', namespace: 'team-a' },
    spec: { providerClassRef: { name: backend }, connection: { endpoint: 'https://north.example', credentialsRef: { name: 'creds' } }, ...settings },
  } as Provider;
}

const machine = {
  apiVersion: 'infrastructure.banlieue.io/v1alpha1',
  kind: 'VSphereMachine',
  metadata: { name: 'm', namespace: 'team-a' },
  spec: { template: 'ubuntu' },
} as unknown as InfraMachine;

function requestOn(p: Provider): ReturnType<typeof toMachineRequest> {
  const placement: FoundPlacement = { ok: true, provider: p, failureDomain: { name: 'fd-1', attributes: { raw: { datacenter: 'DC0' } } } };
  return toMachineRequest(machine, { identity: { uuid: 'u', providerID: 'vsphere://u' }, spec: machine.spec, placement, userData: undefined });
}

describe('the Provider settings a machine request carries', () => {
  it("carries the block of the Provider's own backend", () => {
    expect(requestOn(provider('vsphere', { vsphere: { allowCloneFromVirtualMachines: true } })).providerSettings).toEqual({
      allowCloneFromVirtualMachines: true,
    });
    expect(requestOn(provider('cloud-hypervisor', { cloudHypervisor: { x: 1 } })).providerSettings).toEqual({ x: 1 });
  });

  it('carries none when the Provider has no block, and never the block of another backend', () => {
    expect(requestOn(provider('vsphere', {}))).not.toHaveProperty('providerSettings');
    expect(requestOn(provider('vsphere', { libvirt: { domainType: 'qemu' } }))).not.toHaveProperty('providerSettings');
  });
});
