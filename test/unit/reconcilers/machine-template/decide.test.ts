// A *MachineTemplate's status: what one machine of it offers a Node, for the
// cluster-autoscaler to scale from zero.
import { describe, expect, it } from 'vitest';
import { BUILT_IN_BACKENDS } from '../../../../controller/backends/registry.js';
import { decideTemplateStatus } from '../../../../controller/reconcilers/machine-template/decide.js';
import { INFRA_MACHINE_TEMPLATE_KINDS } from '../../../../infra/api/kinds.js';

describe('MachineTemplate status', () => {
  it('gives capacity as quantity strings (cpu, memory in Mi) and nodeInfo linux', () => {
    expect(decideTemplateStatus({ cpus: 4, memoryMiB: 8192, architecture: 'amd64' })).toEqual({
      capacity: { cpu: '4', memory: '8192Mi' },
      nodeInfo: { architecture: 'amd64', operatingSystem: 'linux' },
    });
  });

  // Each backend reads its own spec fields: a template of each kind, as users write them.
  it.each([
    ['vsphere', { template: 'ubuntu', numCpus: 2, memoryMiB: 4096 }, { cpu: '2', memory: '4096Mi' }],
    ['proxmox', { templateVmid: 9000, cores: 2, sockets: 2, memoryMiB: 3072 }, { cpu: '4', memory: '3072Mi' }],
    ['proxmox', { templateVmid: 9000, cores: 3, memoryMiB: 2048 }, { cpu: '3', memory: '2048Mi' }],
    ['libvirt', { vcpus: 6, memoryMiB: 6144 }, { cpu: '6', memory: '6144Mi' }],
    ['cloud-hypervisor', { cpus: { boot: 2, max: 8 }, memory: { sizeMiB: 1024 } }, { cpu: '2', memory: '1024Mi' }],
  ] as const)('sizes a %s machine template from its spec %j', (backend, spec, capacity) => {
    const descriptor = BUILT_IN_BACKENDS.get(backend);
    if (!descriptor) throw new Error(`no ${backend} descriptor`);
    const status = decideTemplateStatus(descriptor.machineCapacity(spec as never));
    expect(status).toEqual({ capacity, nodeInfo: { architecture: 'amd64', operatingSystem: 'linux' } });
  });

  it('serves status.capacity and status.nodeInfo on every template kind', () => {
    for (const kind of INFRA_MACHINE_TEMPLATE_KINDS) {
      const properties = (kind.status as { properties?: Record<string, unknown> } | undefined)?.properties ?? {};
      expect(Object.keys(properties), kind.kind).toEqual(['capacity', 'nodeInfo']);
    }
  });
});
