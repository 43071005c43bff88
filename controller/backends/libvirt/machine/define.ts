// Making a LibvirtMachine's domain in one pass, each step quick and safe to run again after a
// crash: its volumes (named after the UUID and the machine's mark, so a retry finds them), the NoCloud seed (written
// before the first boot, never after), the definition with the UUID and the mark in its
// <metadata>. The domain is started by the power step.
import type { LibvirtMachineSpec } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/libvirt-machine.js';
import type { MachineRequest } from '../../backend.js';
import { toSeedImage } from '../../cloud-init/nocloud-seed.js';
import type { Made } from '../../kit/machine/steps.js';
import type { Domain } from '../client/handles.js';
import { ownerMark } from '../../ownership.js';
import type { Logger } from '../../../runtime/log.js';
import type { LibvirtClient } from '../client/libvirt-client.js';
import { defaultDomainName } from '../domain-name.js';
import { RawKey, type DomainType } from '../mapping.js';
import { consoleLogPath, toDomainXml } from './domain-xml.js';
import { macOf } from './mac-address.js';
import { assertImageVolume, ensureDisks, imageFacts, lookupPool, parseVolumeRef, writeSeed } from './volumes.js';

/** Volumes, seed, definition; the domain made, with the mark its definition carries. */
export async function defineDomain(client: LibvirtClient, request: MachineRequest<LibvirtMachineSpec>, log: Logger): Promise<Made<Domain>> {
  const { spec, uuid } = request;
  const name = spec.domainName ?? defaultDomainName(request.namespace, request.name);
  const source = parseVolumeRef(spec.bootSource.volume, spec.pool);
  assertImageVolume(source, 'spec.bootSource.volume');
  const pool = await lookupPool(client, spec.pool);
  const image = await imageFacts(client, source, 'spec.bootSource.volume');
  const disks = await ensureDisks(client, pool, request, spec, spec.bootSource.kind === 'backingVolume' ? image : undefined);
  const nics = (spec.network ?? []).map((nic) => ({ kind: nic.source.kind, source: nic.source.name, mac: macOf(uuid, nic), model: nic.model ?? 'virtio' }));
  const seedImage = toSeedImage({
    uuid,
    hostname: request.name,
    providerID: request.providerID,
    userData: request.userData,
    nics: (spec.network ?? []).map((nic, i) => ({ name: nic.name, mac: nics[i]?.mac ?? '', ipam: nic.ipam })),
    nicsField: 'spec.network',
  });
  const seed = await writeSeed(client, pool, request, seedImage, async () => {
    // libvirt's test driver has no volume streams, and no guest that would read the seed.
    const tolerated = (await client.host.hypervisorType()).toUpperCase() === 'TEST';
    if (tolerated) log.info({ uuid }, 'The test driver takes no volume uploads: the seed volume stays empty');
    return tolerated;
  });
  const owner = ownerMark(request.owner);
  const xml = toDomainXml({
    type: (request.raw[RawKey.DomainType] as DomainType | undefined) ?? 'kvm',
    name,
    uuid,
    owner,
    vcpus: spec.vcpus,
    memoryMiB: spec.memoryMiB,
    firmware: spec.firmware ?? 'bios',
    machineType: spec.machineType,
    disks,
    installMedia: spec.bootSource.kind === 'installMedia' ? source : undefined,
    seed,
    nics,
    consoleLog: consoleLogPath(name),
  });
  log.info({ uuid, domain: name }, 'Defining the domain');
  const domain = await client.domains.define(xml);
  log.info({ uuid, domain: name }, 'Defined the domain');
  return {
    state: 'Ended',
    task: `the definition of domain ${domain.name}`,
    target: domain.name,
    creates: true,
    actions: ['Created', 'GuestDataWritten'],
    made: { ref: domain.name, vm: domain, marks: { owner, releasedFrom: undefined } },
  };
}
