// The Proxmox VE backend: a PVE cluster reached over /api2/json with an API
// token. One client pool per role, shared by discovery, image rows and machines.
import type { Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { ImageSource } from '../../../infra/api/banlieue.io/v1alpha1/vm-image.js';
import type { ProxmoxMachineSpec } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/proxmox-machine.js';
import type { Backend, BackendContext, Connection, Discovery, ImageResolution } from '../backend.js';
import { withSignal } from '../cancellation.js';
import { proxmoxClients } from './sessions.js';
import { discoverNodes } from './discovery.js';
import { resolveTemplate } from './images.js';
import { proxmoxMachines } from './machine/proxmox-machines.js';
import { toFailureDomains } from './mapping.js';

export function createProxmoxBackend(context: BackendContext): Backend<ProxmoxMachineSpec> {
  const pool = proxmoxClients(context.onCall ? { onCall: context.onCall } : {});
  return {
    discover: (provider: Provider, connection: Connection, signal?: AbortSignal): Promise<Discovery> =>
      withSignal(signal, () =>
        pool.use(connection, async (client) => ({ failureDomains: toFailureDomains(provider, await discoverNodes(client), connection.endpoint) })),
      ),
    resolveImage: (_provider: Provider, connection: Connection, source: ImageSource, signal?: AbortSignal): Promise<ImageResolution> => {
      if (source.kind !== 'Template') return Promise.resolve(resolveTemplate(source, []));
      return withSignal(signal, () => pool.use(connection, async (client) => resolveTemplate(source, await client.cluster.resources('vm'))));
    },
    machines: proxmoxMachines(pool),
    close: () => pool.closeAll(),
  };
}
