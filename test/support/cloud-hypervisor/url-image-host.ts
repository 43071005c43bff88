// A Cloud Hypervisor host that only looks up images (no VMM is started, no
// network namespace): its directories in `dir`, its host config with the Url
// image policy given, and the Provider it serves.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import { parseHostConfig, type HostConfig, type HostUrlImages } from '../../../controller/backends/cloud-hypervisor/host-config.js';

export interface UrlImageHost {
  readonly config: HostConfig;
  readonly provider: Provider;
}

/** Makes `images`, `fast` and `state` under `dir` (if absent) and the host of them. */
export function urlImageHost(dir: string, urlImages: Partial<HostUrlImages> = {}): UrlImageHost {
  for (const sub of ['images', 'fast', 'state']) mkdirSync(join(dir, sub), { recursive: true });
  const config = parseHostConfig(
    JSON.stringify({
      hostName: 'testhost',
      stateRoot: join(dir, 'state'),
      imageDir: join(dir, 'images'),
      vmm: { binary: '/bin/false', requireKvm: false },
      storageClasses: { fast: join(dir, 'fast') },
      urlImages,
    }),
    'test',
  );
  const provider = {
    apiVersion: 'banlieue.io/v1alpha1',
    kind: 'Provider',
    metadata: { name: 'host-a', namespace: 'ns' },
    spec: { providerClassRef: { name: 'cloud-hypervisor' }, connection: { endpoint: `unix://testhost${config.stateRoot}` } },
  } as Provider;
  return { config, provider };
}
