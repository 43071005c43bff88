// The Proxmox world of `make test-faults`: the schema-held PVE simulator
// (test/sims/proxmox/) with slowed clone tasks (so kills land mid-clone), the
// user's objects for it, `banlieue provider proxmox`, and a freeze that holds
// every API request unanswered. The simulated guest agent reports an address
// once a VM runs, so the run plays no guest. The simulator runs in the run's
// own process; the provider replicas reach it over loopback HTTPS.
import { startProxmoxSim } from '../sims/proxmox/proxmox-sim.js';
import type { SimVm } from '../sims/proxmox/sim-state.js';
import { proxmoxWorld } from '../support/proxmox/world.js';
import type { FaultWorld, StartFaultWorld } from './fault-world.js';

/** Each qmclone task runs this long, so that kills land mid-clone; the other tasks (config, resize, start, stop, destroy) shorter. */
const TASK_DELAY_MS = { qmclone: 8_000, default: 500 };

export const startProxmoxFaultWorld: StartFaultWorld = async (teardown, { namespace, prefix, say }) => {
  say(`Starting the PVE simulator (qmclone tasks ${TASK_DELAY_MS.qmclone / 1000} s)`);
  const sim = await startProxmoxSim({ taskDelayMs: TASK_DELAY_MS });
  teardown.defer('PVE simulator', () => sim.stop());
  const world = proxmoxWorld(namespace, sim, 'faults');
  const faultWorld: FaultWorld = {
    title: 'proxmox on the PVE simulator',
    peer: 'PVE simulator',
    machineKind: 'ProxmoxMachine',
    providerLease: 'banlieue-provider-proxmox',
    provider: world.provider,
    objects: [world.secret, world.provider, world.vmClass, world.vmImage],
    vmClassName: world.vmClass.metadata.name,
    vmImageName: world.vmImage.metadata.name,
    cloneMs: TASK_DELAY_MS.qmclone,
    providerArgs: ['provider', 'proxmox', '--poll-period', '1', '--rediscover-period', '5', '--discover-timeout', '8'],
    uuidOf: (providerID) => providerID.replace(/^proxmox:\/\//, '').toLowerCase(),
    // In memory: a clone shows from its start (PVE writes the new VM's config first), as a VM locked by the clone.
    backendVms: () =>
      Promise.resolve(
        [...sim.state.vms.values()]
          .filter((vm) => isRunVm(vm, prefix))
          .map((vm) => ({ name: String(vm.config.name), uuid: uuidOfVm(vm), instance: instanceOf(vm) })),
      ),
    freeze: () => sim.pause(),
    resume: () => sim.resume(),
    // A call PVE would refuse is a provider bug even when the fleet ends well.
    peerProblems: () => sim.violations.slice(0, 5).map((v) => `PVE simulator: ${v.kind} violation in ${v.call}: ${JSON.stringify(v.errors)}`),
  };
  return faultWorld;
};

const isRunVm = (vm: SimVm, prefix: string): boolean => vm.config.template !== 1 && String(vm.config.name ?? '').startsWith(prefix);

/**
 * What a VM made again changes: its VMID may be handed out again (nextid gives the lowest free one),
 * but PVE gives every clone a new vmgenid.
 */
const instanceOf = (vm: SimVm): string => `VMID ${vm.vmid} vmgenid ${String(vm.config.vmgenid ?? 'none')}`;

/** The UUID in a VM's smbios1 (`uuid=<uuid>[,…]`), lower case; empty when it has none. */
const uuidOfVm = (vm: SimVm): string => /(?:^|,)uuid=([0-9a-fA-F-]+)/.exec(String(vm.config.smbios1 ?? ''))?.[1]?.toLowerCase() ?? '';
