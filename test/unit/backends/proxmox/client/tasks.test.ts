import { describe, expect, it } from 'vitest';
import { copyProgress } from '../../../../../controller/backends/proxmox/client/tasks.js';

const log = (...texts: string[]): { n: number; t: string }[] => texts.map((t, i) => ({ n: i + 1, t }));

describe('a PVE task log read for copy progress', () => {
  it.each([
    ['no line says how far', log('create full clone of drive scsi0 (local-lvm:base-9000-disk-0)'), undefined],
    [
      "qemu-img convert's last line",
      log(
        'create full clone of drive scsi0 (local-lvm:base-9000-disk-0)',
        'transferred 0.0 B of 32.0 GiB (0.00%)',
        'transferred 12.8 GiB of 32.0 GiB (40.01%)',
      ),
      40.01,
    ],
    ["a drive mirror's line", log('drive-scsi0: transferred 2.0 GiB of 10.0 GiB (20.00%) in 4s'), 20],
    ['the last copy line, not a later line of other text', log('transferred 10.0 GiB of 10.0 GiB (100.00%)', 'TASK OK'), 100],
  ])('%s', (_, lines, progress) => {
    expect(copyProgress(lines)).toBe(progress);
  });
});
