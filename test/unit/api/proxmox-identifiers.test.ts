// Identifiers a ProxmoxMachine hands PVE: the schema holds them to PVE's own
// formats, so a value PVE would refuse in a clone or config call is refused at
// admission naming its field. The cases include an empty storage, an empty
// data-disk storage and a unicode bridge, which the PVE simulator refuses.
import { describe, expect, it } from 'vitest';
import { BanlieueValidator } from '../../../infra/api/validator.js';

const validator = new BanlieueValidator();

type Spec = Record<string, unknown>;

const machine = (change: (spec: Spec) => void): unknown => {
  const spec: Spec = {
    node: 'pve1',
    templateVmid: 9001,
    storage: 'local-lvm',
    pool: 'ci/runners',
    cores: 1,
    memoryMiB: 512,
    osDiskSizeGiB: 20,
    dataDisks: [{ name: 'data', sizeGiB: 5, storage: 'ceph.nvme_1' }],
    nics: [{ name: 'net0', bridge: 'vmbr0', ipam: { static: { address: '192.0.2.5', prefix: 24 } } }],
    isoStorage: 'local',
    cpuType: 'x86-64-v2-AES',
  };
  change(spec);
  return { apiVersion: 'infrastructure.banlieue.io/v1alpha1', kind: 'ProxmoxMachine', metadata: { name: 'm', namespace: 'ns' }, spec };
};

const fields = (obj: unknown): string[] => validator.validate(obj).map((issue) => issue.field);
const first = (spec: Spec, list: string): Spec => (spec[list] as Spec[])[0] as Spec;

const BAD: [string, (spec: Spec, value: string) => void, string][] = [
  ['spec.storage', (s, v) => (s.storage = v), 'spec.storage'],
  ['spec.dataDisks[0].storage', (s, v) => (first(s, 'dataDisks').storage = v), 'spec.dataDisks[0].storage'],
  ['spec.isoStorage', (s, v) => (s.isoStorage = v), 'spec.isoStorage'],
  ['spec.nics[0].bridge', (s, v) => (first(s, 'nics').bridge = v), 'spec.nics[0].bridge'],
  ['spec.pool', (s, v) => (s.pool = v), 'spec.pool'],
  ['spec.node', (s, v) => (s.node = v), 'spec.node'],
  ['spec.cpuType', (s, v) => (s.cpuType = v), 'spec.cpuType'],
];

const HOSTILE: [string, string][] = [
  ['an empty string', ''],
  ['unicode', 'vm-ünïcødé-名前-😀'],
  ['XML markup', '</name><injected attr="1">&amp;&lt;'],
  ['shell metacharacters', '$(reboot); `id`'],
  ['a comma and a key (a PVE property string)', 'vmbr0,tag=5'],
  ['a space', 'local lvm'],
];

describe('ProxmoxMachine identifiers PVE parses', () => {
  it('accepts the identifiers PVE accepts', () => {
    expect(validator.validate(machine(() => undefined))).toEqual([]);
  });

  describe.each(BAD)('%s', (_what, set, field) => {
    it.each(HOSTILE)('refuses %s naming the field', (_kind, value) => {
      expect(fields(machine((s) => set(s, value)))).toContain(field);
    });
  });

  it('refuses a one-character storage ID, as PVE does (an ID starts with a letter and ends with a letter or digit)', () => {
    expect(fields(machine((s) => (s.storage = 'a')))).toContain('spec.storage');
    expect(fields(machine((s) => (s.storage = 'ceph-')))).toContain('spec.storage');
  });
});
