// The vSphere world of `make test-faults`: vcsim with slowed CloneVM_Task (so
// kills land mid-clone) and a template, the user's objects for it, `banlieue
// provider vsphere`, frozen by SIGSTOP, and VMware Tools played by the run:
// once a machine's clone exists, it reports a guest IP, as the integration
// tests and benches do.
import type { VsphereClient } from '../../controller/backends/vsphere/client/vsphere-client.js';
import { startVcsim } from '../peers/vsphere/vcsim.js';
import type { Obj } from '../support/fixtures.js';
import { IN_TEMPLATE_DATACENTER, makeTemplate, playTools, uuidOf, vcsimClient, vsphereWorld } from '../support/vsphere/world.js';
import type { FaultWorld, StartFaultWorld } from './fault-world.js';
import type { BackendVm } from './fleet-check.js';

const TEMPLATE = 'faults-ubuntu';
/** Each CloneVM_Task runs this long in vcsim, so that kills land mid-clone. */
const CLONE_MS = 8_000;

export const startVsphereFaultWorld: StartFaultWorld = async (teardown, { namespace, prefix, names, say }) => {
  say(`Starting vcsim (-method-delay CloneVm:${CLONE_MS})`);
  // LockHandoff:0 as in the delayed-clone bench: vcsim's lock hand-over would otherwise add the delay again.
  const vcsim = await startVcsim({ datacenters: 2, clusters: 2, methodDelayMs: { CloneVm: CLONE_MS, LockHandoff: 0 } });
  teardown.defer('vcsim', () => vcsim.stop());
  const client = await vcsimClient(vcsim);
  teardown.defer('vcsim session', () => client.close());
  await makeTemplate(client, TEMPLATE);
  const world = vsphereWorld(namespace, vcsim, 'faults', TEMPLATE);
  const backendVms = (): Promise<BackendVm[]> => fleetVms(client, prefix);
  const played = new Set<string>();
  const faultWorld: FaultWorld = {
    title: 'vsphere on vcsim',
    peer: 'vcsim',
    machineKind: 'VSphereMachine',
    providerLease: 'banlieue-provider-vsphere',
    provider: world.provider,
    objects: [world.secret, world.provider, world.vmClass, world.vmImage],
    vmClassName: world.vmClass.metadata.name,
    placement: IN_TEMPLATE_DATACENTER,
    vmImageName: world.vmImage.metadata.name,
    cloneMs: CLONE_MS,
    providerArgs: ['provider', 'vsphere', '--poll-period', '1', '--rediscover-period', '5', '--discover-timeout', '8'],
    uuidOf: (providerID) => uuidOf(providerID).toLowerCase(),
    backendVms,
    freeze: () => vcsim.pause(),
    resume: () => vcsim.resume(),
    async playGuest(machines: readonly Obj[]) {
      const waiting = machines.filter((m) => typeof m.spec?.providerID === 'string' && !played.has(String(m.spec.providerID)));
      if (waiting.length === 0) return;
      const cloned = new Set((await backendVms()).map((vm) => vm.uuid));
      for (const m of waiting) {
        const uuid = uuidOf(String(m.spec?.providerID)).toLowerCase();
        const index = names.indexOf(m.metadata.name);
        if (!cloned.has(uuid) || index < 0) continue;
        if (await playTools(client, uuid, `10.40.0.${index + 1}`)) played.add(String(m.spec?.providerID));
      }
    },
  };
  return faultWorld;
};

/**
 * The run's VMs in vcsim (not templates): one property-collector call for the whole inventory. Each
 * with its managed object id (`vm-42`), which a clone gets anew: a VM made again has another.
 */
async function fleetVms(client: VsphereClient, prefix: string): Promise<BackendVm[]> {
  const vms = await client.vms.list(client.session.serviceContent.rootFolder);
  return vms
    .filter((vm) => !vm.template && vm.name.startsWith(prefix))
    .map((vm) => ({ name: vm.name, uuid: (vm.uuid ?? '').toLowerCase(), instance: vm.ref.value }));
}
