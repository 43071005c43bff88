// The VMM client against the vendored OpenAPI spec: every operation it calls exists with
// that method and body schema, every field its wire types declare is one the spec knows
// (with the spec's type), and real v53.0 answers decode.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decodePing, decodeVmInfo } from '../../../../controller/backends/cloud-hypervisor/client/vmm-decoders.js';
import { VMM_API_ROOT, VmmOperations } from '../../../../controller/backends/cloud-hypervisor/client/vmm-operations.js';
import type { VmConfig, VmResize, VmResizeDisk } from '../../../../controller/backends/cloud-hypervisor/client/vmm-types.js';
import { API_ROOT, hasOperation, requestSchemaName, SPEC_SHA256, specSha256, SpecValidator } from '../../../fixtures/cloud-hypervisor/openapi.js';

/** Every field made required, recursively: a sample of this type names every declared field. */
type DeepRequired<T> = T extends readonly (infer U)[] ? readonly DeepRequired<U>[] : T extends object ? { readonly [K in keyof T]-?: DeepRequired<T[K]> } : T;

// Adding a field to a wire type fails compilation here until it is added to the sample,
// and the sample is then validated against the spec with unknown properties refused.
const EVERY_VM_CONFIG_FIELD: DeepRequired<VmConfig> = {
  cpus: { boot_vcpus: 2, max_vcpus: 4, nested: false, kvm_hyperv: false },
  memory: { size: 2 * 1024 ** 3, hotplug_size: 1024 ** 3, shared: false, hugepages: false, hugepage_size: 2 * 1024 ** 2, prefault: false },
  payload: { firmware: '/usr/share/cloud-hypervisor/CLOUDHV.fd', kernel: '/boot/vmlinux', cmdline: 'console=ttyS0', initramfs: '/boot/initrd' },
  disks: [
    {
      path: '/var/lib/banlieue/m/os.raw',
      id: 'os',
      readonly: false,
      direct: false,
      serial: 'os',
      image_type: 'Raw',
      backing_files: false,
      num_queues: 1,
      queue_size: 128,
    },
  ],
  net: [{ tap: 'bch0011223344', mac: '02:11:22:33:44:55', host_mac: '02:11:22:33:44:56', mtu: 1500, id: 'nic0', num_queues: 2, queue_size: 256 }],
  rng: { src: '/dev/urandom' },
  serial: { mode: 'File', file: '/var/lib/banlieue/m/serial.log', socket: '/run/serial.sock' },
  console: { mode: 'Off', file: '/var/lib/banlieue/m/console.log', socket: '/run/console.sock' },
  platform: { system_uuid: '6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b', system_serial_number: 'ds=nocloud', oem_strings: ['banlieue.io/machine=ns/name'] },
  watchdog: true,
};
const EVERY_RESIZE_FIELD: DeepRequired<VmResize> = { desired_vcpus: 2, desired_ram: 1024 ** 3, desired_balloon: 0 };
const EVERY_RESIZE_DISK_FIELD: DeepRequired<VmResizeDisk> = { id: 'os', desired_size: 20 * 1024 ** 3 };

const fixture = (name: string): string => readFileSync(new URL(`../../../fixtures/cloud-hypervisor/${name}`, import.meta.url), 'utf8');

describe('Cloud Hypervisor OpenAPI spec (vendored)', () => {
  it('is the pinned file', () => {
    expect(specSha256()).toBe(SPEC_SHA256);
  });

  it('serves the API where the client calls it', () => {
    expect(VMM_API_ROOT).toBe(API_ROOT);
  });
});

describe('VMM client operations against the spec', () => {
  it.each(Object.entries(VmmOperations))('%s is a %s operation of the spec with the body schema the client sends', (_name, operation) => {
    expect(hasOperation(operation.method, operation.path)).toBe(true);
    expect(requestSchemaName(operation.method, operation.path)).toBe('body' in operation ? operation.body : undefined);
  });
});

describe('VMM wire types against the spec', () => {
  const closed = new SpecValidator({ closed: true });
  const open = new SpecValidator({ closed: false });

  it.each([
    ['VmConfig', EVERY_VM_CONFIG_FIELD],
    ['VmResize', EVERY_RESIZE_FIELD],
    ['VmResizeDisk', EVERY_RESIZE_DISK_FIELD],
  ])('every field declared for %s is in the spec, with its type', (schema, sample) => {
    expect(closed.errors(schema, sample)).toEqual([]);
  });

  it('accepts the smallest VmConfig banlieue could send', () => {
    const minimal: VmConfig = { payload: { firmware: '/fw' } };
    expect(closed.errors('VmConfig', minimal)).toEqual([]);
  });

  it.each([
    ['a misspelt field', { payload: {}, cpu: { boot_vcpus: 1, max_vcpus: 1 } }, 'must NOT have additional properties (cpu)'],
    ['a string for a number', { payload: {}, memory: { size: '1G' } }, 'VmConfig/memory/size must be integer'],
    ['no payload', { cpus: { boot_vcpus: 1, max_vcpus: 1 } }, "must have required property 'payload'"],
    ['an unknown console mode', { payload: {}, serial: { mode: 'Bogus' } }, 'VmConfig/serial/mode must be equal to one of the allowed values'],
    ['zero vCPUs', { payload: {}, cpus: { boot_vcpus: 0, max_vcpus: 1 } }, 'VmConfig/cpus/boot_vcpus must be >= 1'],
    ['a PCI device id beyond uint8', { payload: {}, rng: { src: '/dev/urandom', pci_device_id: 300 } }, 'VmConfig/rng/pci_device_id must be <= 255'],
  ])('refuses a VmConfig with %s', (_why, config, message) => {
    expect(closed.errors('VmConfig', config).join('\n')).toContain(message);
  });

  it('reads the v53.0 vm.info answer as VmInfo (open: v53.0 sends fields the spec lacks) and decodes it', () => {
    const body = fixture('v53.0-vm-info.json');
    expect(open.errors('VmInfo', JSON.parse(body))).toEqual([]);
    expect(closed.errors('VmInfo', JSON.parse(body)).join('\n')).toContain('(profile)');
    const info = decodeVmInfo('vm.info', body);
    expect(info.state).toBe('Created');
    expect(info.config.platform?.system_uuid).toBe('6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b');
  });

  it('reads the v53.0 vmm.ping answer as VmmPingResponse and decodes it', () => {
    const body = fixture('v53.0-vmm-ping.json');
    expect(open.errors('VmmPingResponse', JSON.parse(body))).toEqual([]);
    expect(decodePing('vmm.ping', body)).toMatchObject({ version: '53.0.0', build_version: 'v53.0.0', features: ['io_uring', 'kvm'] });
  });
});
