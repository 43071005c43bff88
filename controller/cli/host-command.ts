// `banlieue host …`: set-up of a host that runs a provider role (Cloud Hypervisor).
import { hostname } from 'node:os';
import { Command, InvalidArgumentError } from 'commander';
import { DEFAULT_HOST_CONFIG_PATH } from '../backends/cloud-hypervisor/host-config.js';
import { DEFAULT_STATE_ROOT } from '../backends/cloud-hypervisor/state-dir.js';

function nameValue(flag: string): (value: string, previous: Record<string, string>) => Record<string, string> {
  return (value, previous) => {
    const at = value.indexOf('=');
    if (at <= 0 || at === value.length - 1) throw new InvalidArgumentError(`${flag} takes <class>=<value>, got "${value}"`);
    return { ...previous, [value.slice(0, at)]: value.slice(at + 1) };
  };
}

interface HostInstallFlags {
  provider: string;
  namespace: string;
  hostName: string;
  kubeconfig: string;
  config: string;
  stateRoot: string;
  imageDir: string;
  vmmBinary: string;
  firmware?: string;
  storageClass: Record<string, string>;
  networkClass: Record<string, string>;
  netns?: string;
  banlieue: string;
  root: string;
  dryRun?: boolean;
}

export function hostCommand(): Command {
  const host = new Command('host').description('set up a host that runs a provider role (Cloud Hypervisor)');
  host
    .command('install')
    .description('the host config, systemd unit, directories and RBAC of one Cloud Hypervisor host; --dry-run prints them for review')
    .requiredOption('--provider <name>', 'the Provider this host serves')
    .requiredOption('--namespace <ns>', "the Provider's namespace")
    .option('--host-name <name>', "this host's name (the Provider's endpoint names it)", hostname())
    .option('--kubeconfig <path>', "the provider's kubeconfig (its token: see the printed steps)", '/etc/banlieue/kubeconfig')
    .option('--config <path>', 'where the host config is written', DEFAULT_HOST_CONFIG_PATH)
    .option('--state-root <dir>', 'machine state directories (sockets, logs, seeds)', DEFAULT_STATE_ROOT)
    .option('--image-dir <dir>', 'VM images (VMImage BackingFile sources)', '/var/lib/banlieue/images')
    .option('--vmm-binary <path>', 'the cloud-hypervisor binary (v53+)', '/usr/local/bin/cloud-hypervisor')
    .option('--firmware <path>', 'firmware for images without a kernel beside them (e.g. CLOUDHV.fd)')
    .option('--storage-class <class=dir>', 'a storage class and its directory (repeatable)', nameValue('--storage-class'), {})
    .option('--network-class <class=bridge>', 'a network class and its bridge (repeatable)', nameValue('--network-class'), {})
    .option('--netns <name>', 'network namespace the bridges are in (VMMs run there)')
    .option('--banlieue <path>', 'the banlieue executable the unit runs', '/usr/local/bin/banlieue')
    .option('--root <dir>', 'write under this directory instead of /', '/')
    .option('--dry-run', 'print what would be written, write nothing')
    .action(async (flags: HostInstallFlags) => {
      // Loaded when run: it renders RBAC with the install's constructs, which no role needs in memory.
      const { describeHostInstall, renderHostInstall, writeHostInstall } = await import('./host-install.js');
      const install = renderHostInstall({
        provider: flags.provider,
        namespace: flags.namespace,
        hostName: flags.hostName,
        kubeconfig: flags.kubeconfig,
        configPath: flags.config,
        stateRoot: flags.stateRoot,
        imageDir: flags.imageDir,
        vmmBinary: flags.vmmBinary,
        ...(flags.firmware ? { firmware: flags.firmware } : {}),
        storageClasses: flags.storageClass,
        networkClasses: flags.networkClass,
        ...(flags.netns ? { netns: flags.netns } : {}),
        banlieue: flags.banlieue,
      });
      if (flags.dryRun) {
        process.stdout.write(describeHostInstall(install));
        return;
      }
      for (const path of await writeHostInstall(install, flags.root)) process.stderr.write(`wrote ${path}\n`);
      process.stdout.write(`${install.nextSteps.map((s, i) => `${i + 1}. ${s}`).join('\n')}\n`);
    });
  return host;
}
