// The vSphere backend: a vCenter (or vcsim) reached over vim25 SOAP.
import type { Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { ImageSource } from '../../../infra/api/banlieue.io/v1alpha1/vm-image.js';
import type { VSphereMachineSpec } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/vsphere-machine.js';
import { Reason } from '../../../infra/api/conditions.js';
import type { Backend, BackendContext, Connection, Discovery, ImageResolution } from '../backend.js';
import { withSignal } from '../cancellation.js';
import type { VsphereClient } from './client/vsphere-client.js';
import { discoverInventory } from './discovery.js';
import { ALLOW_VMS_FIELD, cloneSourceOf, type CloneSource } from './machine/clone-targets.js';
import { GuestWatches } from './machine/guest-watch.js';
import { vsphereMachines } from './machine/vsphere-machines.js';
import { toFailureDomains } from './mapping.js';
import { vsphereSessions } from './sessions.js';

/**
 * The template named `ref`, looked up in every datacenter (a VM that is not a template only
 * where the Provider allows machines to clone one: the same rule as spec.template); resolved
 * to its inventory path, so a clone finds it with one FindByInventoryPath.
 */
async function findTemplate(client: VsphereClient, ref: string, source: CloneSource): Promise<ImageResolution> {
  for (const dc of await client.inventory.datacenters()) {
    const template = await client.vms.findNamed(dc.vmFolder, ref, { templatesOnly: !source.virtualMachines });
    if (template) return { ready: true, resolvedRef: await client.inventory.inventoryPath(template) };
  }
  const message = source.virtualMachines
    ? `no template or VM named "${ref}" in any datacenter`
    : `no template named "${ref}" in any datacenter; a VM that is not a template is cloned only where the Provider sets ${ALLOW_VMS_FIELD}`;
  return { ready: false, reason: Reason.ImageSourceNotFound, message };
}

/** The vSphere backend of one role: its session pool is shared by every pass of that role. */
export function createVsphereBackend(context: BackendContext): Backend<VSphereMachineSpec> {
  const sessions = vsphereSessions(context.onCall ? { onCall: context.onCall } : {});
  return {
    discover: (provider: Provider, connection: Connection, signal?: AbortSignal): Promise<Discovery> =>
      withSignal(signal, () => sessions.use(connection, async (client) => ({ failureDomains: toFailureDomains(provider, await discoverInventory(client)) }))),
    resolveImage: (provider: Provider, connection: Connection, source: ImageSource, signal?: AbortSignal): Promise<ImageResolution> => {
      if (source.kind !== 'Template') {
        return Promise.resolve({ ready: false, reason: Reason.UnsupportedSource, message: `vSphere images must be kind Template, not ${source.kind}` });
      }
      const clones = cloneSourceOf(provider.spec.vsphere);
      return withSignal(signal, () => sessions.use(connection, (client) => findTemplate(client, source.ref, clones)));
    },
    machines: vsphereMachines(sessions, context.wake ? new GuestWatches(context.wake, context.log) : undefined),
    close: () => sessions.closeAll(),
  };
}
