// The inside of a pod sandbox (pod-sandbox.ts): runs as root in a network and
// mount namespace of its own (`unshare --net --mount`), does what a container
// runtime does for one container, then runs the image's entrypoint:
//
// - loopback up; the host's loopback ports the pod must reach (the API
//   server, vcsim) served on the pod's 127.0.0.1 and carried to the host over
//   unix sockets (the only thing two network namespaces share here), and the
//   pod's own ports (health, metrics) offered back as unix sockets;
// - the image root bind-mounted read-only (readOnlyRootFilesystem), with a
//   fresh /proc, a /dev of the usual device nodes, and the ServiceAccount
//   volume (token, ca.crt, namespace) read-only at its well-known path;
// - the entrypoint run chrooted as the pod's user, no new privileges.
//
// Its one argument is the JSON of a PodInit. It ends when the container does,
// with its exit code; SIGTERM is passed on, as the kubelet's stop is.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Server } from 'node:net';
import { join } from 'node:path';
import { forwardTo } from './socket-forward.js';

/** What pod-sandbox.ts asks for. */
export interface PodInit {
  /** The unpacked image root; mount points are made in it before it goes read-only. */
  readonly rootfs: string;
  /** Host directory with token, ca.crt and namespace. */
  readonly serviceAccountDir: string;
  /** Host directory of the unix sockets. */
  readonly socketDir: string;
  /** Host loopback ports reachable in the pod: host side listens on `<socketDir>/host-<port>.sock`. */
  readonly hostPorts: readonly number[];
  /** Pod ports offered on the host as `<socketDir>/pod-<port>.sock`. */
  readonly podPorts: readonly number[];
  /** The container's command line: image entrypoint + the Deployment's args. */
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly uid: number;
  readonly gid: number;
}

export const SERVICE_ACCOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';

function run(cmd: string, args: readonly string[]): void {
  const r = spawnSync(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) throw new Error(`pod-init: ${cmd} ${args.join(' ')} exited ${r.status ?? r.signal}`);
}

function setUpNetwork(init: PodInit): Server[] {
  run('ip', ['link', 'set', 'lo', 'up']);
  const servers: Server[] = [];
  for (const port of init.hostPorts) {
    servers.push(forwardTo(() => connect(join(init.socketDir, `host-${port}.sock`))).listen(port, '127.0.0.1'));
  }
  for (const port of init.podPorts) {
    const path = join(init.socketDir, `pod-${port}.sock`);
    rmSync(path, { force: true });
    servers.push(forwardTo(() => connect(port, '127.0.0.1')).listen(path));
  }
  return servers;
}

function setUpMounts(init: PodInit): void {
  const root = init.rootfs;
  const sa = join(root, SERVICE_ACCOUNT_PATH);
  // Mount points, made as a runtime makes them (in the container's writable layer).
  for (const dir of [join(root, 'proc'), join(root, 'dev'), sa]) mkdirSync(dir, { recursive: true });
  const devices = ['null', 'zero', 'random', 'urandom', 'full'];
  // Nothing mounted here may reach the host's mount table.
  run('mount', ['--make-rprivate', '/']);
  run('mount', ['--bind', root, root]);
  run('mount', ['-t', 'tmpfs', '-o', 'mode=755,nosuid', 'dev', join(root, 'dev')]);
  for (const d of devices) {
    writeFileSync(join(root, 'dev', d), '');
    run('mount', ['--bind', `/dev/${d}`, join(root, 'dev', d)]);
  }
  run('mount', ['-o', 'remount,bind,ro', join(root, 'dev')]);
  run('mount', ['-t', 'proc', '-o', 'nosuid,nodev,noexec', 'proc', join(root, 'proc')]);
  run('mount', ['--bind', init.serviceAccountDir, sa]);
  run('mount', ['-o', 'remount,bind,ro', sa]);
  run('mount', ['-o', 'remount,bind,ro', root]);
}

/** A host program by absolute path: the container's env (its PATH) is not the host's. */
function hostBinary(name: string): string {
  const found = (process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin')
    .split(':')
    .map((d) => join(d, name))
    .find((p) => existsSync(p));
  if (!found) throw new Error(`pod-init: ${name} not found on the host PATH`);
  return found;
}

function main(): void {
  const init = JSON.parse(process.argv[2] ?? '') as PodInit;
  const servers = setUpNetwork(init);
  setUpMounts(init);
  const container = spawn(hostBinary('setpriv'), ['--no-new-privs', hostBinary('chroot'), `--userspec=${init.uid}:${init.gid}`, init.rootfs, ...init.argv], {
    env: { ...init.env },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => container.kill(signal));
  container.on('exit', (code, signal) => {
    for (const s of servers) s.close();
    process.exit(code ?? (signal ? 128 : 1));
  });
}

main();
