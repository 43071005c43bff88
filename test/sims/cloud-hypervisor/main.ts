// The simulated VMM as a process, command-line compatible with cloud-hypervisor for
// what the supervision code passes (`--api-socket path=<socket>`, `-v`,
// `--no-shutdown`), so the same code starts either (vmm-simulator.ts writes the
// executable wrapper). Flags of its own start with `--sim-`. Like v53.0 (checked): a
// stale socket file is replaced; a socket another live VMM answers on is refused
// ("already in use", exit 1); vmm.shutdown removes the socket and exits 0.
import { connect } from 'node:net';
import { rmSync } from 'node:fs';
import { createVmmServer } from './vmm-server.js';

interface SimArgs {
  socketPath: string;
  version: string;
  violationsFile?: string;
  delaysMs: Map<string, number>;
  guest: 'acpi' | 'halt';
  noShutdown: boolean;
}

function parseArgs(argv: readonly string[]): SimArgs {
  const args: SimArgs = { socketPath: '', version: '53.0.0', delaysMs: new Map(), guest: 'halt', noShutdown: false };
  for (let i = 0; i < argv.length; i += 1) {
    const flag = argv[i] ?? '';
    const value = (): string => {
      const next = argv[(i += 1)];
      if (next === undefined) usage(`${flag} needs a value`);
      return next;
    };
    if (flag === '--api-socket') {
      const path = value()
        .split(',')
        .find((part) => part.startsWith('path='));
      if (!path) usage('--api-socket takes path=<socket> (fd= is not simulated)');
      args.socketPath = path.slice('path='.length);
    } else if (flag === '-v' || flag === '-vv') {
      // Verbosity: the simulator always logs.
    } else if (flag === '--no-shutdown') args.noShutdown = true;
    else if (flag === '--sim-version') args.version = value();
    else if (flag === '--sim-violations') args.violationsFile = value();
    else if (flag === '--sim-guest') {
      const guest = value();
      if (guest !== 'acpi' && guest !== 'halt') usage('--sim-guest is acpi or halt');
      args.guest = guest;
    } else if (flag === '--sim-delay') {
      const [operation = '', ms = ''] = value().split('=');
      args.delaysMs.set(operation, Number(ms));
    } else usage(`unexpected argument '${flag}' found`);
  }
  if (args.socketPath === '') usage('--api-socket path=<socket> is required');
  return args;
}

function usage(message: string): never {
  process.stderr.write(`error: ${message}\n`);
  process.exit(2);
}

function log(message: string): void {
  process.stderr.write(`vmm-simulator: ${new Date().toISOString()} ${message}\n`);
}

/** True when something answers on the socket: another VMM owns it. */
function isAnswering(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(socketPath);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  if (await isAnswering(args.socketPath)) {
    process.stderr.write(
      `Error: Cloud Hypervisor exited with the following chain of errors:\n  0: Failed to start the VMM thread\n  1: API socket "${args.socketPath}" is already in use by another running instance\n`,
    );
    process.exit(1);
  }
  rmSync(args.socketPath, { force: true });
  const exit = (): void => {
    rmSync(args.socketPath, { force: true });
    log('Exiting');
    process.exit(0);
  };
  const server = createVmmServer({ ...args, onExit: exit, log });
  server.listen(args.socketPath, () => log(`Serving ${args.socketPath} as cloud-hypervisor ${args.version}, pid ${process.pid}`));
  process.on('SIGTERM', exit);
  process.on('SIGINT', exit);
}

await main();
