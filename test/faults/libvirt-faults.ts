// The libvirt world of `make test-faults`: a real libvirtd with its test
// driver (test/peers/libvirt/libvirtd.ts), the user's objects for it,
// `banlieue provider libvirt`, frozen by SIGSTOP. The test driver defines
// domains and creates volumes at once, so the Provider reaches the daemon
// through a proxy that holds each volume creation and domain definition for
// seconds (rpc-hold-proxy.ts): a kill lands between a machine's disks and
// its definition, or between the definition and its status write, and a
// call held when its caller was killed still reaches the daemon. The proxy
// reads RPC messages, so the Provider speaks plain `test+tcp://` to it (TLS
// would hide them; `+tcp` is a transport the product supports, not one made
// for this). The test driver's running domains report addresses of their
// own, so the run plays no guest. A domain undefined and defined again keeps
// its UUID and name: the run tells it by the lifecycle events a user would
// watch (`virsh event --loop`), counting each UUID's new definitions.
import type { LibvirtClient } from '../../controller/backends/libvirt/client/libvirt-client.js';
import { LifecycleEvent } from '../../controller/backends/libvirt/client/constants.js';
import { Procedures } from '../../controller/backends/libvirt/client/procedures.js';
import { LOOPBACK, startLibvirtd } from '../peers/libvirt/libvirtd.js';
import { startRpcHoldProxy } from '../peers/libvirt/rpc-hold-proxy.js';
import type { Obj } from '../support/fixtures.js';
import { anchorClient, libvirtWorld, makeImageVolume, TEST_POOL } from '../support/libvirt/world.js';
import type { FaultWorld, StartFaultWorld } from './fault-world.js';
import type { BackendVm } from './fleet-check.js';

/** Each volume creation (two disks and the seed per machine) and each domain definition is held this long. */
const HOLD_MS = { volumeCreate: 2_000, domainDefine: 6_000 };
/** One machine's creation in the peer: its three volumes, then its definition. */
const CREATE_MS = 3 * HOLD_MS.volumeCreate + HOLD_MS.domainDefine;
/** A Defined event's detail for a new definition, not an update of one (virDomainEventDefinedDetailType ADDED). */
const DEFINED_ADDED = 0;

export const startLibvirtFaultWorld: StartFaultWorld = async (teardown, { namespace, prefix, say }) => {
  say(
    `Starting libvirtd (test driver) behind a proxy holding volume creations ${HOLD_MS.volumeCreate / 1000} s and domain definitions ${HOLD_MS.domainDefine / 1000} s`,
  );
  const daemon = await startLibvirtd();
  teardown.defer('libvirtd', () => daemon.stop());
  // The test driver's state lives while a connection is open: this one, without keepalive, so the
  // frozen daemon does not make it give up (and the state go with it).
  const anchor = await anchorClient(daemon, { keepalive: false });
  teardown.defer('libvirt anchor connection', () => anchor.close());
  await makeImageVolume(anchor, await anchor.pools.lookupByName(TEST_POOL));
  // Before any machine: every definition of the run is counted.
  const definitions = new Map<string, number>();
  const stopEvents = await anchor.events.onLifecycle(({ domain, event, detail }) => {
    if (event === LifecycleEvent.Defined && detail === DEFINED_ADDED) definitions.set(domain.uuid, (definitions.get(domain.uuid) ?? 0) + 1);
  });
  teardown.defer('libvirt lifecycle events', () => stopEvents());
  const holds = {
    [Procedures.storageVolCreateXml.number]: HOLD_MS.volumeCreate,
    [Procedures.storageVolCreateXmlFrom.number]: HOLD_MS.volumeCreate,
    [Procedures.domainDefineXmlFlags.number]: HOLD_MS.domainDefine,
  };
  const proxy = await startRpcHoldProxy({ upstreamPort: daemon.tcpPort, holdMs: holds });
  teardown.defer('libvirt RPC proxy', () => {
    const held = (...procs: number[]): number => procs.reduce((n, proc) => n + (proxy.held.get(proc) ?? 0), 0);
    say(
      `The proxy held ${held(Procedures.storageVolCreateXml.number, Procedures.storageVolCreateXmlFrom.number)} volume creations and ${held(Procedures.domainDefineXmlFlags.number)} domain definitions; ${proxy.heldPastClient} calls were still held when their caller went away (killed, or its connection dropped)`,
    );
    return proxy.close();
  });
  const world = libvirtWorld(namespace, daemon, 'faults');
  // `+tcp` needs no credential; the Provider still names a Secret (the API requires one for libvirt).
  const secret: Obj = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'libvirt-tcp', namespace }, stringData: {} };
  const provider: Obj = {
    ...world.provider,
    spec: { ...world.provider.spec, connection: { endpoint: `test+tcp://${LOOPBACK}:${proxy.port}/default`, credentialsRef: { name: secret.metadata.name } } },
  };
  // The test driver's pool holds 100 GiB and counts each volume at full size: 2 GiB a machine.
  const vmClass: Obj = {
    ...world.vmClass,
    spec: {
      ...world.vmClass.spec,
      hardware: {
        cpus: 2,
        memoryMiB: 1024,
        disks: [
          { name: 'os', sizeGiB: 1, storageClass: 'fast' },
          { name: 'data', sizeGiB: 1, storageClass: 'fast' },
        ],
      },
    },
  };
  const faultWorld: FaultWorld = {
    title: 'libvirt on libvirtd (test driver)',
    peer: 'libvirtd',
    machineKind: 'LibvirtMachine',
    providerLease: 'banlieue-provider-libvirt',
    provider,
    objects: [secret, provider, vmClass, world.vmImage],
    vmClassName: vmClass.metadata.name,
    vmImageName: world.vmImage.metadata.name,
    cloneMs: CREATE_MS,
    providerArgs: ['provider', 'libvirt', '--poll-period', '1', '--rediscover-period', '5', '--discover-timeout', '8'],
    uuidOf: (providerID) => providerID.replace(/^libvirt:\/\//, '').toLowerCase(),
    backendVms: () => fleetDomains(anchor, `${namespace}-${prefix}`, namespace, definitions),
    freeze: () => daemon.freeze(),
    resume: () => daemon.thaw(),
  };
  return faultWorld;
};

/**
 * The run's domains, read through the anchor: those named `<namespace>-<prefix>…` (the
 * provider names a domain `<namespace>-<machine>`), each under its machine's name, with how
 * many times its UUID was defined anew (`definitions`, from the lifecycle events) as its id.
 */
async function fleetDomains(anchor: LibvirtClient, domainPrefix: string, namespace: string, definitions: ReadonlyMap<string, number>): Promise<BackendVm[]> {
  const domains = await anchor.domains.list();
  return domains
    .filter((d) => d.name.startsWith(domainPrefix))
    .map((d) => {
      const defined = definitions.get(d.uuid);
      return { name: d.name.slice(namespace.length + 1), uuid: d.uuid.toLowerCase(), ...(defined === undefined ? {} : { instance: `definition ${defined}` }) };
    });
}
