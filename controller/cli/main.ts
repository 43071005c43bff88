// The banlieue binary: one image, roles by subcommand (DESIGN §3).
import { Argument, Command, InvalidArgumentError, Option } from 'commander';
import { BACKENDS, type BackendName } from '../../infra/api/backends.js';
import { DEFAULT_NAMESPACE, DEFAULT_REGISTRY } from '../../infra/install/install-props.js';
import { BUILD_COMMIT, PACKAGE_VERSION, RELEASE_TAG } from '../../infra/version.js';
import { DEFAULT_RECREATES_PER_MINUTE } from '../reconcilers/virtual-machine/recreate-budget.js';
import { CliError } from './cli-error.js';
import { COMPLETION_SHELLS, completionScript, type CompletionShell } from './completion.js';
import {
  controllerLeaseName,
  providerRoleLeaseName,
  roleOptions,
  runControllerCommand,
  runProviderCommand,
  toInt,
  type ControllerFlags,
  type ProviderFlags,
} from './controller-command.js';
import { DEFAULT_ROLLOUT_TIMEOUT, type Duration } from './duration.js';
import { hostCommand } from './host-command.js';
import type { PlacementOptions } from './placement/placement-command.js';
import { PLACEMENT_OUTPUTS } from './placement/placement-output.js';
import type { ValidateOptions } from './validate.js';
import type { VmOptions, VmVerb } from './vm-command.js';

// Each command loads what it runs when it runs: a role's process then never holds the install
// renderer, the validator or another command's libraries (their code and what they build as they load).

function parseBackends(value: string): BackendName[] {
  const list = value
    .split(',')
    .map((b) => b.trim())
    .filter((b) => b.length > 0);
  for (const b of list) {
    if (!(BACKENDS as readonly string[]).includes(b)) {
      throw new InvalidArgumentError(`"${b}" is not a backend (one of ${BACKENDS.join(', ')})`);
    }
  }
  return list as BackendName[];
}

/** A comma-separated list (namespaces, CIDRs), without blanks. */
function parseList(value: string): string[] {
  return value
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n.length > 0);
}

/** `--flag`, `--flag=true` or `--flag=false`, as kubectl writes its booleans. */
function parseBoolean(flag: string): (value: string) => boolean {
  return (value) => {
    if (value === 'true') return true;
    if (value === 'false') return false;
    throw new InvalidArgumentError(`${flag} is true or false, got "${value}"`);
  };
}

/** A duration as kubectl takes one (`90s`, `10m`, `1h30m`), or whole seconds. */
function parseDuration(flag: string): (value: string) => Duration {
  return (value) => {
    const m = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(value);
    const seconds = /^\d+$/.test(value) ? Number(value) : m && value !== '' ? Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0) : NaN;
    if (!(seconds > 0)) throw new InvalidArgumentError(`${flag} is a duration such as 90s, 10m or 1h30m, got "${value}"`);
    return { ms: seconds * 1000, text: value };
  };
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export function buildProgram(): Command {
  const program = new Command('banlieue')
    .description('Kubernetes-native virtual machines and a Cluster API infrastructure provider')
    // A release build names its commit: `0.1.0 (commit 1a2b3c…)`.
    .version(BUILD_COMMIT ? `${PACKAGE_VERSION} (commit ${BUILD_COMMIT})` : PACKAGE_VERSION)
    // Options of the program only before the subcommand, so that
    // `bootstrap operator --version <tag>` is the image tag, not ours.
    .enablePositionalOptions()
    .showHelpAfterError();
  addBootstrapCommand(program);
  addUninstallCommand(program);
  addControllerCommand(program);
  addProviderCommand(program);
  program.addCommand(hostCommand());
  addValidateCommand(program);
  addVersionCommand(program);
  addVmCommand(program);
  addPlacementCommand(program);
  addCompletionCommand(program);
  return program;
}

/** `banlieue vm start|stop|restart NAME`: a VirtualMachine's power, as its spec asks for it. */
function addVmCommand(program: Command): void {
  const vm = program.command('vm').description('start, stop or restart a VirtualMachine (its spec says so; the provider does it)');
  const verbs: readonly [VmVerb, string][] = [
    ['start', 'power the VM on (spec.desiredPowerState PoweredOn)'],
    ['stop', 'shut the guest down, then power the VM off (spec.desiredPowerState PoweredOff; powered off hard after the grace period)'],
    ['restart', 'shut the guest down, then power the VM on again, once (spec.restartRequestedAt); status.restart says how far it went'],
  ];
  for (const [verb, description] of verbs) {
    vm.command(verb)
      .description(description)
      .argument('<name>', 'the VirtualMachine')
      .option('-n, --namespace <ns>', "its namespace (default: the context's, else default)")
      .option('--kubeconfig <path>', 'kubeconfig (default: KUBECONFIG, ~/.kube/config)')
      .option('--context <name>', 'kubeconfig context to use (default: its current context)')
      .action(async (name: string, opts: VmOptions) => {
        const { vmCommand } = await import('./vm-command.js');
        for (const line of await vmCommand(verb, name, opts)) process.stdout.write(`${line}\n`);
      });
  }
}

/** `banlieue placement`: Providers × failure domains, the VMs placed there and the room they publish. */
function addPlacementCommand(program: Command): void {
  program
    .command('placement')
    .description('show each Provider and failure domain with the VMs placed there and the capacity it publishes, as a table, an SVG picture or an HTML page')
    .option('-n, --namespace <ns>', "the namespace (default: the context's, else default)")
    .option('-A, --all-namespaces', 'every namespace')
    .addOption(
      new Option('-o, --output <format>', 'output format: table, svg (a picture) or html (a self-contained page with the picture and the table)')
        .choices(PLACEMENT_OUTPUTS)
        .default('table'),
    )
    .option('--kubeconfig <path>', 'kubeconfig (default: KUBECONFIG, ~/.kube/config)')
    .option('--context <name>', 'kubeconfig context to use (default: its current context)')
    .action(async (opts: PlacementOptions) => {
      if (opts.allNamespaces && opts.namespace !== undefined) throw new CliError('--namespace and --all-namespaces exclude each other');
      const { placementCommand } = await import('./placement/placement-command.js');
      process.stdout.write(await placementCommand(opts));
    });
}

/** `banlieue completion bash|zsh|fish`: a completion script made from this program's commands. */
function addCompletionCommand(program: Command): void {
  program
    .command('completion')
    .description('print a shell completion script: source <(banlieue completion bash), the same with zsh, or banlieue completion fish | source')
    .addArgument(new Argument('<shell>', 'the shell').choices(COMPLETION_SHELLS))
    .action((shell: CompletionShell) => {
      process.stdout.write(completionScript(program, shell));
    });
}

/** `banlieue version`: the client's and the installed version. */
function addVersionCommand(program: Command): void {
  program
    .command('version')
    .description("print this client's version, the version installed in the cluster, and any skew between them")
    .option('--kubeconfig <path>', 'kubeconfig (default: KUBECONFIG, ~/.kube/config)')
    .option('--context <name>', 'kubeconfig context to use (default: its current context)')
    .option('--namespace <ns>', 'the namespace banlieue is installed in', DEFAULT_NAMESPACE)
    .action(async (opts: { kubeconfig?: string; context?: string; namespace: string }) => {
      const { versionLines } = await import('./version-command.js');
      for (const line of await versionLines(opts)) process.stdout.write(`${line}\n`);
    });
}

/** `banlieue bootstrap operator`: the install, applied or printed. */
function addBootstrapCommand(program: Command): void {
  const bootstrap = program.command('bootstrap').description('install banlieue into a cluster');
  bootstrap
    .command('operator')
    .description('install CRDs, RBAC, the controller and the providers (server-side apply)')
    .option('--namespace <ns>', 'namespace of the banlieue workloads', DEFAULT_NAMESPACE)
    .option('--version <tag>', 'image tag', RELEASE_TAG)
    .option('--registry <registry>', 'image registry; the image is <registry>/banlieue:<version>', DEFAULT_REGISTRY)
    .option('--backends <list>', `comma-separated backends (${BACKENDS.join(',')})`, parseBackends)
    .option('--admission-policies', 'install the ValidatingAdmissionPolicies (the default)')
    .option('--no-admission-policies', 'leave the ValidatingAdmissionPolicies out: tenants can then make banlieue read Secrets for them (see README)')
    .option('--network-policies', 'also install the NetworkPolicies')
    .option('--provider-namespaces <list>', 'comma-separated namespaces where Providers live; provider roles read Secrets only there (default: all)', parseList)
    .option(
      '--egress-api-server <cidrs>',
      "with --network-policies: comma-separated CIDRs of the API server's endpoints, the only addresses the pods reach on its ports (default: any)",
      parseList,
    )
    .option(
      '--egress-backends <cidrs>',
      'with --network-policies: comma-separated CIDRs of the backends, the only addresses the provider pods reach on their ports; needs --egress-api-server (default: any)',
      parseList,
    )
    .option('--expose-metrics', 'serve /metrics (unauthenticated) on the pod IP, not only on loopback, with a Service per role')
    .option('--service-monitor', 'with --expose-metrics: also a Prometheus Operator ServiceMonitor per role (needs its CRD)')
    .option('--kubeconfig <path>', 'kubeconfig to use (default: KUBECONFIG, ~/.kube/config, in-cluster)')
    .option('--context <name>', 'kubeconfig context to use (default: its current context)')
    .option('--progress-deadline <seconds>', 'seconds a Deployment may make no progress before its rollout is reported failed', toInt('--progress-deadline'))
    .addOption(
      new Option('--wait [bool]', 'wait until every Deployment has rolled out; --wait=false returns once applied')
        .default(true)
        .preset('true')
        .argParser(parseBoolean('--wait')),
    )
    .addOption(
      new Option('--timeout <duration>', 'with --wait: how long to wait for the rollouts, e.g. 90s, 10m')
        .default(DEFAULT_ROLLOUT_TIMEOUT, DEFAULT_ROLLOUT_TIMEOUT.text)
        .argParser(parseDuration('--timeout')),
    )
    .option('--dry-run', 'print the manifests and contact no cluster')
    .action(async (opts: Record<string, unknown>) => {
      const [{ bootstrapOperator }, { loadKubeConfig }] = await Promise.all([import('./bootstrap-operator.js'), import('../runtime/kube-config.js')]);
      await bootstrapOperator(
        {
          namespace: opts.namespace as string,
          version: opts.version as string,
          registry: opts.registry as string,
          ...(opts.backends ? { backends: opts.backends as BackendName[] } : {}),
          // Both --admission-policies and --no-admission-policies exist, so commander sets no default.
          admissionPolicies: opts.admissionPolicies !== false,
          networkPolicies: Boolean(opts.networkPolicies),
          ...(opts.providerNamespaces ? { providerNamespaces: opts.providerNamespaces as string[] } : {}),
          networkPolicyEgress: {
            ...(opts.egressApiServer ? { apiServer: opts.egressApiServer as string[] } : {}),
            ...(opts.egressBackends ? { backends: opts.egressBackends as string[] } : {}),
          },
          exposeMetrics: Boolean(opts.exposeMetrics),
          serviceMonitor: Boolean(opts.serviceMonitor),
          ...(opts.progressDeadline !== undefined ? { progressDeadlineSeconds: opts.progressDeadline as number } : {}),
          dryRun: Boolean(opts.dryRun),
          wait: opts.wait as boolean,
          timeout: opts.timeout as Duration,
        },
        { out: (t) => process.stdout.write(t), progress: (t) => process.stderr.write(`${t}\n`) },
        () => loadKubeConfig(opts.kubeconfig as string | undefined, opts.context as string | undefined),
      );
    });
}

/** `banlieue uninstall`: what `bootstrap operator` applied, removed. */
function addUninstallCommand(program: Command): void {
  program
    .command('uninstall')
    .description(
      'remove what `bootstrap operator` installs (workloads, RBAC, admission and network policies, the namespace when nothing else is in it); ' +
        'the CRDs and every object of their kinds are kept unless --crds',
    )
    .option('--namespace <ns>', 'the namespace banlieue is installed in', DEFAULT_NAMESPACE)
    .option('--crds', "also delete banlieue's CRDs, and with them every VirtualMachine, Provider, machine... (refused while any exists, unless --force)")
    .option(
      '--force',
      "with --crds: delete them even though objects of their kinds exist, taking banlieue's finalizers off so their VMs stay on the backends, unmanaged",
    )
    .addOption(
      new Option('--timeout <duration>', 'how long to wait for what is deleted to be gone, e.g. 90s, 10m')
        .default({ ms: 5 * 60_000, text: '5m' }, '5m')
        .argParser(parseDuration('--timeout')),
    )
    .option('--kubeconfig <path>', 'kubeconfig to use (default: KUBECONFIG, ~/.kube/config, in-cluster)')
    .option('--context <name>', 'kubeconfig context to use (default: its current context)')
    .option('--dry-run', 'say what would be deleted and delete nothing')
    .action(
      async (opts: { namespace: string; crds?: boolean; force?: boolean; timeout: Duration; kubeconfig?: string; context?: string; dryRun?: boolean }) => {
        if (opts.force && !opts.crds) throw new CliError("--force goes with --crds: without --crds no object of banlieue's kinds is deleted");
        const [{ uninstall }, { loadKubeConfig }] = await Promise.all([import('./uninstall.js'), import('../runtime/kube-config.js')]);
        await uninstall(
          { namespace: opts.namespace, crds: Boolean(opts.crds), force: Boolean(opts.force), dryRun: Boolean(opts.dryRun), timeout: opts.timeout },
          { out: (t) => process.stdout.write(t), progress: (t) => process.stderr.write(`${t}\n`) },
          () => loadKubeConfig(opts.kubeconfig, opts.context),
        );
      },
    );
}

/** `banlieue controller`: the controller role. */
function addControllerCommand(program: Command): void {
  const command = program
    .command('controller')
    .description('run the controller: schedule VirtualMachines, write infrastructure objects, aggregate failure domains')
    .option('--kubeconfig <path>', 'kubeconfig to use (default: KUBECONFIG, ~/.kube/config, in-cluster)')
    .option('--context <name>', 'kubeconfig context to use (default: its current context)')
    .option('--namespace <ns>', 'watch one namespace (default: all)')
    .addOption(roleOptions.namespaceSelector())
    // Reconciles wait on the API server, not the CPU: ten at once keep a burst of VMs moving.
    .option('--concurrency <n>', 'objects reconciled at once per controller', toInt('--concurrency'), 10)
    .option('--resync-period <seconds>', 'requeue every object this often without events', toInt('--resync-period'), 300)
    .option(
      '--max-recreates-per-minute <n>',
      'VirtualMachines of one namespace recreated elsewhere per minute at most, when their placement is impossible and migrationPolicy allows (each destroys a VM and its disks)',
      toInt('--max-recreates-per-minute'),
      DEFAULT_RECREATES_PER_MINUTE,
    );
  addRoleRunOptions(command, 'Lease name (default: banlieue-controller, or banlieue-controller-shard-<hash of the selector> with --namespace-selector)').action(
    async (opts: ControllerFlags) => {
      await runControllerCommand({ ...opts, leaderElectionId: opts.leaderElectionId ?? controllerLeaseName(opts.namespaceSelector) });
    },
  );
}

/** `banlieue provider <backend>`: a backend's provider role. */
function addProviderCommand(program: Command): void {
  const command = program
    .command('provider')
    .description('run a provider role: publish failure domains and reachability, provision its machine kind')
    .argument('<backend>', `backend (${BACKENDS.join(', ')})`)
    .option('--kubeconfig <path>', 'kubeconfig to use (default: KUBECONFIG, ~/.kube/config, in-cluster)')
    .option('--context <name>', 'kubeconfig context to use (default: its current context)')
    .option('--namespace <ns>', 'watch one namespace (default: all)')
    .option(
      '--provider <name>',
      'serve only this Provider (with --namespace): its status, its VMImage rows and the machines placed on it, as a Cloud Hypervisor host serves its own (default: every Provider of the backend)',
    )
    .addOption(roleOptions.providerSelector())
    .option('--concurrency <n>', 'Providers reconciled at once', toInt('--concurrency'), 4)
    .option('--rediscover-period <seconds>', 'read each backend inventory again this often', toInt('--rediscover-period'), 300)
    .option(
      '--discover-timeout <seconds>',
      'a backend that has not answered a discovery within this long is reported unreachable (ProviderReachable=False)',
      toInt('--discover-timeout'),
      60,
    )
    .option('--machine-concurrency <n>', 'machines reconciled at once (clones run in parallel)', toInt('--machine-concurrency'), 10)
    .option(
      '--poll-period <seconds>',
      'while a machine waits on its backend (a guest IP, where the backend does not watch its VMs; a failure domain), look again this often',
      toInt('--poll-period'),
      10,
    )
    .option('--resync-period <seconds>', 'read a converged machine again this often (power drift, addresses)', toInt('--resync-period'), 300);
  addRoleRunOptions(
    command,
    'Lease name (default: banlieue-provider-<backend>, banlieue-provider-<backend>-<provider> with --provider, banlieue-provider-<backend>-shard-<hash of the selector> with --provider-selector)',
  ).action(async (backend: string, opts: ProviderFlags) => {
    await runProviderCommand(backend, { ...opts, leaderElectionId: opts.leaderElectionId ?? providerRoleLeaseName(backend, opts) });
  });
}

/**
 * What every role runs with: its health and metrics server, its leader election (the Lease
 * `--leader-election-id` names: `leaseIdHelp`, `leaseIdDefault`) and its log level.
 */
function addRoleRunOptions(command: Command, leaseIdHelp: string, leaseIdDefault?: string): Command {
  return command
    .addOption(roleOptions.healthPort())
    .addOption(roleOptions.metricsPort())
    .addOption(roleOptions.bindAddress())
    .addOption(roleOptions.metricsBindAddress())
    .option('--no-leader-elect', 'run without leader election (a single replica)')
    .addOption(roleOptions.leaderElectionNamespace())
    .option('--leader-election-id <name>', leaseIdHelp, leaseIdDefault)
    .option('--leader-election-identity <id>', 'this process in the Lease (default: POD_NAME or host-pid)')
    .addOption(roleOptions.leaseDuration())
    .addOption(roleOptions.logLevel())
    .addOption(roleOptions.logFormat());
}

/** `banlieue validate`: objects checked offline, or by the API server. */
function addValidateCommand(program: Command): void {
  program
    .command('validate')
    .description(
      'check banlieue objects as the API server would on a create: kinds, versions, names, unknown fields, schema; ' +
        'CEL rules are reported as not checked offline (--server asks the API server, a dry run)',
    )
    .argument('[paths...]', 'YAML or JSON files, directories (recursive *.yaml, *.yml, *.json), `-` for stdin (the default)')
    .addOption(new Option('-o, --output <format>', 'output format').choices(['text', 'json']).default('text'))
    .option('--server', 'ask the API server instead (dry-run create, fieldValidation=Strict; nothing is stored)')
    .option('--kubeconfig <path>', 'kubeconfig for --server (default: KUBECONFIG, ~/.kube/config, in-cluster)')
    .option('--context <name>', 'kubeconfig context to use (default: its current context)')
    .option('--namespace <ns>', "namespace of namespaced objects that name none, for --server (default: the context's, else default)")
    .action(async (paths: string[], opts: ValidateOptions) => {
      const { validateCommand } = await import('./validate.js');
      await validateCommand(paths, opts, { print: (line) => process.stdout.write(`${line}\n`), readStdin });
    });
}

export async function main(argv: readonly string[]): Promise<number> {
  // A closed pipe (`banlieue ... | head`) is the reader's choice, not an error.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
  });
  try {
    await buildProgram().parseAsync([...argv]);
    return 0;
  } catch (err) {
    const message = err instanceof CliError || err instanceof Error ? err.message : String(err);
    process.stderr.write(`error: ${message}\n`);
    return err instanceof CliError ? err.exitCode : 1;
  }
}
