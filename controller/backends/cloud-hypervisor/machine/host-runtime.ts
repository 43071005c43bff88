// What every machine pass of one provider shares: the host config, how VMMs
// are started (the binary, the state root, the namespace they run in), the
// `ip` runner and the clock of power-off deadlines.
import type { HostConfig } from '../host-config.js';
import { IpLinks } from '../host/ip-links.js';
import type { VmmHostOptions } from '../vmm-process.js';

export interface HostRuntime {
  readonly config: HostConfig;
  readonly vmm: VmmHostOptions;
  readonly ip: IpLinks;
  readonly now: () => Date;
}

export function hostRuntime(config: HostConfig, now: () => Date = () => new Date()): HostRuntime {
  return {
    config,
    vmm: {
      binary: config.vmm.binary,
      root: config.stateRoot,
      // A guest's own power-off leaves the VMM up with its VM shut down (state Created):
      // told apart from a VMM that died, and booted again or stopped as desiredPowerState says.
      extraArgs: ['--no-shutdown'],
      ...(config.netns ? { launcher: ['ip', 'netns', 'exec', config.netns] } : {}),
      startTimeoutMs: 30_000,
      stopTimeoutMs: 15_000,
      callTimeoutMs: 10_000,
    },
    ip: new IpLinks(config.netns),
    now,
  };
}
