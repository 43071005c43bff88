// The VmConfig a machine is created with: its UUID and mark, the qcow2 overlay with its backing file, the seed, taps.
import { describe, expect, it } from 'vitest';
import { ownerMarkOf, resizedConfig, toVmConfig } from '../../../../controller/backends/cloud-hypervisor/machine/vm-config.js';
import { SpecValidator } from '../../../fixtures/cloud-hypervisor/openapi.js';

const UUID = '6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b';
const input = {
  uuid: UUID,
  ownerMark: 'CloudHypervisorMachine/ns/web-1',
  spec: { cpus: { boot: 2, max: 4 }, memory: { sizeMiB: 1024 } },
  payload: { kernel: '/img/ubuntu.raw.kernel', cmdline: 'console=ttyS0 root=/dev/vda1' },
  osDisk: `/srv/fast/${UUID}/os.qcow2`,
  seedDisk: `/var/lib/banlieue/cloud-hypervisor/${UUID}/seed.iso`,
  nics: [{ tap: 'bch6f1c2b3a4d0', mac: '02:11:22:33:44:55' }],
  serialLog: `/var/lib/banlieue/cloud-hypervisor/${UUID}/serial.log`,
};

describe('VmConfig of a machine', () => {
  it('carries the UUID as system_uuid and the ownership mark as an OEM string', () => {
    const config = toVmConfig(input);
    expect(config.platform).toEqual({ system_uuid: UUID, oem_strings: ['banlieue.owner=CloudHypervisorMachine/ns/web-1'] });
    expect(ownerMarkOf(config)).toBe('CloudHypervisorMachine/ns/web-1');
    expect(ownerMarkOf({ payload: {} })).toBeUndefined();
  });

  it('attaches the overlay (backing files allowed) then the read-only seed, and one tap per NIC', () => {
    const config = toVmConfig(input);
    expect(config.disks).toEqual([
      { id: 'os', path: input.osDisk, image_type: 'Qcow2', backing_files: true },
      { id: 'seed', path: input.seedDisk, readonly: true, image_type: 'Raw' },
    ]);
    expect(config.net).toEqual([{ id: 'nic0', tap: 'bch6f1c2b3a4d0', mac: '02:11:22:33:44:55' }]);
    expect(config.cpus).toEqual({ boot_vcpus: 2, max_vcpus: 4, nested: false });
    expect(config.memory).toEqual({ size: 1024 * 1024 * 1024 });
    expect(config.serial).toEqual({ mode: 'File', file: input.serialLog });
  });

  it('is a VmConfig the spec accepts, with no field it does not know', () => {
    expect(new SpecValidator({ closed: true }).errors('VmConfig', toVmConfig(input))).toEqual([]);
  });

  it('is resized to a changed spec, and left alone by an unchanged one', () => {
    const config = toVmConfig(input);
    expect(resizedConfig(config, input.spec)).toBeUndefined();
    expect(resizedConfig(config, { cpus: { boot: 3 }, memory: { sizeMiB: 2048 } })).toMatchObject({
      cpus: { boot_vcpus: 3, max_vcpus: 3 },
      memory: { size: 2048 * 1024 * 1024 },
    });
  });
});
