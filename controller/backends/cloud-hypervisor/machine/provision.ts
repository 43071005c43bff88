// The files and links a machine's VMM needs before it starts, each made only
// when absent, so a pass that crashed half-way is finished by the next: the
// record first (the ownership mark and everything a deletion must find), the
// NoCloud seed before the first boot, then at every start the OS disk overlay
// (grown to the spec), the seed if it went missing, the taps on their bridges.
import { access } from 'node:fs/promises';
import type { CloudHypervisorMachineSpec } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/cloud-hypervisor-machine.js';
import type { MachineRequest } from '../../backend.js';
import { ownerMark } from '../../ownership.js';
import { ensureStateDir, type VmmPaths } from '../state-dir.js';
import type { HostRuntime } from './host-runtime.js';
import { payloadFor, placeOnHost } from './host-placement.js';
import { seedPath, writeAtomically, writeRecord, type MachineRecord } from './machine-record.js';
import { ensureOsDisk, growOsDisk, OS_DISK } from './os-disk.js';
import { toSeedImage } from '../../cloud-init/nocloud-seed.js';
import { toVmConfig } from './vm-config.js';

type Request = MachineRequest<CloudHypervisorMachineSpec>;

/** Places the machine on this host and writes its record; nothing else exists yet. */
export async function recordMachine(host: HostRuntime, paths: VmmPaths, request: Request): Promise<MachineRecord> {
  const placement = placeOnHost(host.config, request.uuid, request.spec, request.raw);
  const config = toVmConfig({
    uuid: request.uuid,
    ownerMark: ownerMark(request.owner),
    spec: request.spec,
    payload: await payloadFor(host.config, placement.image),
    osDisk: `${placement.diskDir}/${OS_DISK}`,
    seedDisk: seedPath(paths),
    nics: placement.nics,
    serialLog: paths.serialLog,
  });
  const record: MachineRecord = {
    owner: ownerMark(request.owner),
    config,
    image: placement.image,
    diskDir: placement.diskDir,
    osDiskSizeGiB: request.spec.osDiskSizeGiB,
    taps: placement.nics.map((nic) => ({ name: nic.tap, bridge: nic.bridge })),
  };
  await ensureStateDir(paths);
  await writeRecord(paths, record);
  return record;
}

/** The NoCloud seed of a recorded machine, written when absent (never over one the guest may have read). Tells whether it was written. */
export async function ensureSeed(paths: VmmPaths, request: Request, record: MachineRecord): Promise<boolean> {
  const seed = seedPath(paths);
  if (await exists(seed)) return false;
  const nics = (request.spec.nics ?? []).map((nic, i) => ({ name: nic.name, mac: record.config.net?.[i]?.mac ?? '', ipam: nic.ipam }));
  await writeAtomically(
    seed,
    toSeedImage({ uuid: request.uuid, hostname: request.name, providerID: request.providerID, userData: request.userData, nics, nicsField: 'spec.nics' }),
  );
  return true;
}

/** Disk, seed and taps of a recorded machine before its VMM starts, made where absent; the disk grown to the spec. */
export async function ensureMachineFiles(host: HostRuntime, paths: VmmPaths, request: Request, record: MachineRecord): Promise<MachineRecord> {
  const disk = await ensureOsDisk(record.diskDir, record.image, record.osDiskSizeGiB);
  let current = record;
  if (request.spec.osDiskSizeGiB > record.osDiskSizeGiB) {
    await growOsDisk(disk, request.spec.osDiskSizeGiB);
    current = { ...record, osDiskSizeGiB: request.spec.osDiskSizeGiB };
    await writeRecord(paths, current);
  }
  await ensureSeed(paths, request, current);
  const links = await host.ip.list();
  for (const tap of record.taps) await host.ip.ensureTap(tap.name, tap.bridge, links);
  return current;
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}
