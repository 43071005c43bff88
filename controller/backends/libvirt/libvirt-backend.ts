// The libvirt backend: libvirt hosts reached over libvirt's RPC protocol
// (client/), one Provider per host. Its session pool is shared by every pass
// of the role: a Provider's discovery, image rows and machines use one
// connection.
import type { Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { ImageSource } from '../../../infra/api/banlieue.io/v1alpha1/vm-image.js';
import type { LibvirtMachineSpec } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/libvirt-machine.js';
import type { Backend, BackendContext, Connection, Discovery, ImageResolution } from '../backend.js';
import { withSignal } from '../cancellation.js';
import { discoverHost } from './discovery.js';
import { resolveImage } from './images.js';
import { libvirtMachines } from './machine/libvirt-machines.js';
import { toFailureDomains } from './mapping.js';
import { libvirtSessions } from './sessions.js';

export function createLibvirtBackend(context: BackendContext): Backend<LibvirtMachineSpec> {
  const sessions = libvirtSessions(context.onCall ? { onCall: context.onCall } : {});
  return {
    discover: (provider: Provider, connection: Connection, signal?: AbortSignal): Promise<Discovery> =>
      withSignal(signal, () => sessions.use(connection, async (client) => ({ failureDomains: toFailureDomains(provider, await discoverHost(client)) }))),
    resolveImage: (provider: Provider, connection: Connection, source: ImageSource, signal?: AbortSignal): Promise<ImageResolution> =>
      withSignal(signal, () => sessions.use(connection, (client) => resolveImage(client, provider, source))),
    machines: libvirtMachines(sessions),
    close: () => sessions.closeAll(),
  };
}
