// The Cloud Hypervisor backend: this host, its VMMs (one process per machine,
// supervised through their state directories) and its bridges. It reads its
// host config once, when the role starts (docs/adr/0017): the file named by
// BANLIEUE_CH_HOST_CONFIG, else /etc/banlieue/cloud-hypervisor.yaml.
import { readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { ImageSource } from '../../../infra/api/banlieue.io/v1alpha1/vm-image.js';
import type { CloudHypervisorMachineSpec } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/cloud-hypervisor-machine.js';
import { Reason } from '../../../infra/api/conditions.js';
import { isBackendError } from '../backend-error.js';
import type { Backend, BackendContext, Connection, Discovery, ImageResolution, MachineBackend } from '../backend.js';
import { withSignal } from '../cancellation.js';
import { assertServes, toFailureDomains } from './discovery.js';
import { DEFAULT_HOST_CONFIG_PATH, HOST_CONFIG_ENV, parseHostConfig, type HostConfig } from './host-config.js';
import { readHostFacts } from './host/host-facts.js';
import { cloudHypervisorMachines } from './machine/ch-machines.js';
import { ImageDownloads } from './image-download.js';
import { imagePath } from './machine/host-placement.js';
import { HostSweep } from './machine/sweep.js';
import { hostRuntime } from './machine/host-runtime.js';

/** The backend of the role, its host config read from the file the environment names (or the default). */
export function createCloudHypervisorBackend(context: BackendContext): Backend<CloudHypervisorMachineSpec> {
  const path = process.env[HOST_CONFIG_ENV] || DEFAULT_HOST_CONFIG_PATH;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new Error(`cannot read the Cloud Hypervisor host config ${path} (${HOST_CONFIG_ENV}): ${(error as Error).message}`);
  }
  return cloudHypervisorBackend(parseHostConfig(text, path), context);
}

/** The backend of a parsed host config (tests build it directly). */
export function cloudHypervisorBackend(config: HostConfig, context: BackendContext = {}): Backend<CloudHypervisorMachineSpec> {
  const host = hostRuntime(config);
  const timed = <T>(method: string, work: () => Promise<T>): Promise<T> => counted(context, method, work);
  const machines = cloudHypervisorMachines(host);
  const downloads = new ImageDownloads(config.imageDir, config.urlImages);
  const sweeps = new HostSweep(host);
  const countedMachines: MachineBackend<CloudHypervisorMachineSpec> = {
    ensure: (connection, request, options) => timed('ensure', () => machines.ensure(connection, request, options)),
    destroy: (connection, request, options) => timed('destroy', () => machines.destroy(connection, request, options)),
    release: (connection, request, options) => timed('release', () => machines.release(connection, request, options)),
  };
  return {
    discover: (provider: Provider, _connection: Connection, signal?: AbortSignal): Promise<Discovery> =>
      timed('discover', () =>
        withSignal(signal, async () => {
          assertServes(provider, config);
          const domain = toFailureDomains(provider, config, await readHostFacts(config));
          return {
            failureDomains: domain.failureDomains,
            ...(domain.withdrawn ? { withdrawn: { reason: Reason.CapacityExceeded, message: domain.withdrawn } } : {}),
          };
        }),
      ),
    resolveImage: (provider: Provider, _connection: Connection, source: ImageSource): Promise<ImageResolution> =>
      resolveImage(config, downloads, provider, source),
    machines: countedMachines,
    // Only image downloads are held between passes: VMMs are separate processes and outlive the role.
    close: () => downloads.close(),
    sweep: async (judge, log, signal) => {
      const removed = await withSignal(signal, () => sweeps.run(judge, log));
      if (removed.length > 0) log.info({ removed }, 'Finished the deletions of machines that no longer exist');
    },
  };
}

/** A BackingFile source: a file in the host's image directory; a Url source: downloaded there (image-download.ts). */
async function resolveImage(config: HostConfig, downloads: ImageDownloads, provider: Provider, source: ImageSource): Promise<ImageResolution> {
  if (source.kind !== 'BackingFile' && source.kind !== 'Url') {
    return {
      ready: false,
      reason: Reason.UnsupportedSource,
      message: `Cloud Hypervisor images must be kind BackingFile (a file in ${config.imageDir}) or Url, not ${source.kind}`,
    };
  }
  try {
    assertServes(provider, config);
    if (source.kind === 'Url') return await downloads.resolve(source);
    const path = imagePath(config, source.ref);
    const found = await stat(path).catch(() => undefined);
    if (!found?.isFile()) return { ready: false, reason: Reason.ImageSourceNotFound, message: `no image file ${path} on host ${config.hostName}` };
    return { ready: true, resolvedRef: path };
  } catch (error) {
    if (!isBackendError(error)) throw error;
    return { ready: false, reason: Reason.ImageSourceNotFound, message: error.message };
  }
}

async function counted<T>(context: BackendContext, method: string, work: () => Promise<T>): Promise<T> {
  const started = process.hrtime.bigint();
  const seconds = (): number => Number(process.hrtime.bigint() - started) / 1e9;
  try {
    const result = await work();
    context.onCall?.(method, 'ok', seconds());
    return result;
  } catch (error) {
    context.onCall?.(method, isBackendError(error) ? 'fault' : 'error', seconds());
    throw error;
  }
}
