// Where one machine's VMM keeps its files on the host: `<root>/<uuid>/` holds the API
// socket, the pidfile, the VMM's log and the guest's serial log. The directory, not the
// provider's memory, is the record of which VMMs exist: a restarted provider finds them
// by listing the root (vmm-adoption.ts).
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The state root when none is configured. */
export const DEFAULT_STATE_ROOT = '/var/lib/banlieue/cloud-hypervisor';

// sun_path is 108 bytes on Linux, the terminating NUL included.
const MAX_SOCKET_PATH_BYTES = 107;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export interface VmmPaths {
  readonly uuid: string;
  /** `<root>/<uuid>`. */
  readonly dir: string;
  /** The VMM's `--api-socket path=`. */
  readonly apiSocket: string;
  /** The VMM's process id, written by whoever started it. */
  readonly pidFile: string;
  /** The VMM's stdout and stderr. */
  readonly logFile: string;
  /** Where the VM's serial port is written (`serial: { mode: File }`). */
  readonly serialLog: string;
}

/** True for a lower-case RFC 4122 UUID, the form banlieue names machines by. */
export function isMachineUuid(value: string): boolean {
  return UUID.test(value);
}

/** The paths of machine `uuid` under `root`; throws on a malformed UUID or a socket path too long for a unix socket. */
export function vmmPaths(root: string, uuid: string): VmmPaths {
  if (!isMachineUuid(uuid)) throw new TypeError(`machine UUID "${uuid}" is not a lower-case UUID`);
  const dir = join(root, uuid);
  const apiSocket = join(dir, 'api.sock');
  if (Buffer.byteLength(apiSocket) > MAX_SOCKET_PATH_BYTES) {
    throw new TypeError(`state root "${root}" is too long: the API socket path ${apiSocket} exceeds ${MAX_SOCKET_PATH_BYTES} bytes`);
  }
  return { uuid, dir, apiSocket, pidFile: join(dir, 'vmm.pid'), logFile: join(dir, 'vmm.log'), serialLog: join(dir, 'serial.log') };
}

/** Creates the machine's directory. Owner-only: the socket in it controls the VM without authentication. */
export async function ensureStateDir(paths: VmmPaths): Promise<void> {
  await mkdir(paths.dir, { recursive: true, mode: 0o700 });
}

/** The UUIDs of the machine directories under `root` (other entries are not ours and are ignored); none when root is absent. */
export async function listMachineUuids(root: string): Promise<string[]> {
  try {
    const entries = await readdir(root, { withFileTypes: true });
    return entries
      .filter((entry) => entry.isDirectory() && isMachineUuid(entry.name))
      .map((entry) => entry.name)
      .sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

/** The pid in the pidfile; undefined when there is none or it holds no pid. */
export async function readPidFile(paths: VmmPaths): Promise<number | undefined> {
  let text: string;
  try {
    text = await readFile(paths.pidFile, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const pid = Number(text.trim());
  return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
}

/** Writes the pidfile by rename, so a reader never sees half a pid. */
export async function writePidFile(paths: VmmPaths, pid: number): Promise<void> {
  const temporary = `${paths.pidFile}.${process.pid}.tmp`;
  await writeFile(temporary, `${pid}\n`, { mode: 0o600 });
  await rename(temporary, paths.pidFile);
}

/**
 * Removes what a VMM leaves behind when it dies: the socket, the lock file Cloud
 * Hypervisor v53 keeps beside it (`api.sock.lock`), and the pidfile. Logs and disks stay.
 */
export async function removeRuntimeFiles(paths: VmmPaths): Promise<void> {
  await Promise.all([paths.apiSocket, `${paths.apiSocket}.lock`, paths.pidFile].map((file) => rm(file, { force: true })));
}

/** Removes the machine's whole directory (its VMM must be stopped). */
export async function removeStateDir(paths: VmmPaths): Promise<void> {
  await rm(paths.dir, { recursive: true, force: true });
}
