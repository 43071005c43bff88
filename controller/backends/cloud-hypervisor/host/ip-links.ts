// The host's links and neighbours through iproute2 (`ip -json`), in the host's
// namespace or, when the host config names one, in that network namespace
// (`ip -n <netns>`): the bridges of the network classes, one tap per NIC, and
// the neighbour table guest addresses are read from.
import { BackendErrorKind, isBackendError } from '../../backend-error.js';
import { CommandError, runCommand } from './run-command.js';

export interface Link {
  readonly name: string;
  /** The bridge this link is enslaved to. */
  readonly master?: string;
  /** True for a Linux bridge. */
  readonly bridge: boolean;
  /** The link's own MAC (a tap's host side). */
  readonly mac?: string;
  readonly up: boolean;
}

export interface Neighbour {
  readonly address: string;
  readonly mac: string;
  readonly device: string;
  /** NUD state: REACHABLE, STALE, DELAY, PROBE, PERMANENT, FAILED, INCOMPLETE… */
  readonly state: readonly string[];
}

interface IpLinkJson {
  ifname?: string;
  master?: string;
  address?: string;
  flags?: string[];
  linkinfo?: { info_kind?: string };
}

interface IpNeighJson {
  dst?: string;
  dev?: string;
  lladdr?: string;
  state?: string[];
}

export class IpLinks {
  constructor(private readonly netns?: string) {}

  /** Every link, with whether it is a bridge and what it is enslaved to. */
  async list(): Promise<Link[]> {
    const rows = JSON.parse((await this.ip(['-json', '-details', 'link', 'show'])).stdout || '[]') as IpLinkJson[];
    return rows.flatMap((row) =>
      row.ifname === undefined
        ? []
        : [
            {
              name: row.ifname,
              bridge: row.linkinfo?.info_kind === 'bridge',
              up: (row.flags ?? []).includes('UP'),
              ...(row.master ? { master: row.master } : {}),
              ...(row.address ? { mac: row.address } : {}),
            },
          ],
    );
  }

  /** Creates tap `name` (if absent), joins it to `bridge` and sets it up. */
  async ensureTap(name: string, bridge: string, existing: readonly Link[]): Promise<void> {
    const found = existing.find((l) => l.name === name);
    if (!found) {
      try {
        await this.ip(['tuntap', 'add', 'dev', name, 'mode', 'tap']);
      } catch (error) {
        // Made meanwhile (a concurrent pass of the same machine cannot run; an operator could).
        if (!(error instanceof CommandError && /exists|busy/i.test(error.stderr))) throw error;
      }
    }
    if (found?.master !== bridge || !found.up) await this.ip(['link', 'set', 'dev', name, 'master', bridge, 'up']);
  }

  /** Deletes link `name`; an absent link is success. */
  async delete(name: string): Promise<void> {
    try {
      await this.ip(['link', 'delete', 'dev', name]);
    } catch (error) {
      if (error instanceof CommandError && /cannot find device|does not exist/i.test(error.stderr)) return;
      throw error;
    }
  }

  /** The neighbour table (IPv4 and IPv6). */
  async neighbours(): Promise<Neighbour[]> {
    const rows = JSON.parse((await this.ip(['-json', 'neigh', 'show'])).stdout || '[]') as IpNeighJson[];
    return rows.flatMap((row) =>
      row.dst && row.lladdr && row.dev ? [{ address: row.dst, mac: row.lladdr.toLowerCase(), device: row.dev, state: row.state ?? [] }] : [],
    );
  }

  private ip(args: readonly string[]): ReturnType<typeof runCommand> {
    return runCommand('ip', this.netns ? ['-n', this.netns, ...args] : args, 10_000);
  }
}

/** True when `error` says the namespace itself is missing (`ip -n` on a namespace that is not there). */
export function isMissingNetns(error: unknown): boolean {
  return isBackendError(error, BackendErrorKind.Rejected) && error instanceof CommandError && /netns|network namespace/i.test(error.stderr);
}
