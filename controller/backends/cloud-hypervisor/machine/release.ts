// Releasing a machine's VM (deletionPolicy Retain), once the machine recipe found its record
// with the machine's mark: the record loses the mark (kept as `releasedFrom`) and any
// deletion tombstone, and nothing else changes. Its VMM runs on as it ran (or stays stopped),
// its disk, seed and taps stay: no pass, adoption or sweep of banlieue touches a directory
// whose record carries no mark. The VmConfig inside the running VMM still names the machine
// in its OEM strings, but nothing is adopted by those without the record's mark.
import type { Owned } from '../../kit/machine/steps.js';
import { writeRecord, type ChVm } from './machine-record.js';

export async function unmarkRecord({ paths, record }: Owned<ChVm>, releasedFrom: string): Promise<void> {
  const { owner: _mark, deletionStartedAt: _tombstone, ...rest } = record;
  await writeRecord(paths, { ...rest, releasedFrom });
}
