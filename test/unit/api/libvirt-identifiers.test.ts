// Names a LibvirtMachine hands libvirt (its pool, its boot volume, each
// interface's network or bridge) reach domain and volume XML and RPC strings:
// the schema holds them to a grammar of letters, digits and `._:+-`, so markup,
// paths, option-like words and shell metacharacters are refused at admission
// naming their field. The XML library escaping them is the second line.
import { describe, expect, it } from 'vitest';
import { BanlieueValidator } from '../../../infra/api/validator.js';
import { assertImageVolume, parseVolumeRef } from '../../../controller/backends/libvirt/machine/volumes.js';
import { BackendErrorKind, isBackendError } from '../../../controller/backends/backend-error.js';

const validator = new BanlieueValidator();

type Spec = Record<string, unknown>;

const machine = (change: (spec: Spec) => void): unknown => {
  const spec: Spec = {
    pool: 'default-pool',
    bootSource: { kind: 'backingVolume', volume: 'images/debian-12-genericcloud.qcow2' },
    vcpus: 1,
    memoryMiB: 512,
    disks: [{ name: 'os', sizeGiB: 10 }],
    network: [{ name: 'eth0', source: { kind: 'bridge', name: 'br0.20' } }],
  };
  change(spec);
  return { apiVersion: 'infrastructure.banlieue.io/v1alpha1', kind: 'LibvirtMachine', metadata: { name: 'm', namespace: 'ns' }, spec };
};

const fields = (obj: unknown): string[] => validator.validate(obj).map((issue) => issue.field);
const nic = (spec: Spec): Spec => ((spec.network as Spec[])[0] as Spec).source as Spec;

const NAMED: [string, (spec: Spec, value: string) => void][] = [
  ['spec.pool', (s, v) => (s.pool = v)],
  ['spec.bootSource.volume', (s, v) => ((s.bootSource as Spec).volume = v)],
  ['spec.network[0].source.name', (s, v) => (nic(s).name = v)],
];

const HOSTILE: [string, string][] = [
  ['XML markup', "</source><source file='/etc/shadow'/>"],
  ['an absolute path', '/dev/sda'],
  ['a parent path', '../other-pool/disk.qcow2'],
  ['an option-like word', '-o'],
  ['shell metacharacters', '$(reboot);`id`'],
  ['a space', 'default pool'],
  ['unicode', 'pööl'],
];

describe('LibvirtMachine names libvirt parses', () => {
  it('accepts names libvirt takes: dots, dashes, colons, a <pool>/<volume>', () => {
    expect(validator.validate(machine(() => undefined))).toEqual([]);
  });

  describe.each(NAMED)('%s', (field, set) => {
    it.each(HOSTILE)('refuses %s naming the field', (_kind, value) => {
      expect(fields(machine((s) => set(s, value)))).toContain(field);
    });
  });
});

describe("a machine's boot volume", () => {
  const machineDisk = '1b4e28ba-2fa1-11d2-883f-0016d3cca427-0a1b2c3d4e5f60718293-os.qcow2';

  it("is refused when it is named as a machine's disk is, in its pool or another: never an overlay on another machine's disk", () => {
    for (const ref of [machineDisk, `other-pool/${machineDisk}`]) {
      let refused: unknown;
      try {
        assertImageVolume(parseVolumeRef(ref, 'default-pool'), 'spec.bootSource.volume');
      } catch (err) {
        refused = err;
      }
      expect(isBackendError(refused, BackendErrorKind.Rejected)).toBe(true);
      expect(String((refused as Error).message)).toContain(`spec.bootSource.volume: "${machineDisk}" is named as a machine's disk is`);
    }
  });

  it('is taken when it is an image volume', () => {
    expect(() => assertImageVolume(parseVolumeRef('debian-12-genericcloud.qcow2', 'default-pool'), 'spec.bootSource.volume')).not.toThrow();
  });
});
