// A node the API endpoint cannot reach, said as such (pure mapping of PVE's 595).
import { BackendError, BackendErrorKind } from '../../backend-error.js';
import { isProxmoxError } from '../client/proxmox-error.js';

/** Runs `read`; a node PVE cannot reach (595) is said as such: the machines on it report it, the others go on. */
export async function reachable<T>(node: string, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    if (isProxmoxError(err) && err.status === 595) {
      throw new BackendError(BackendErrorKind.Unreachable, `node ${node} is offline or unreachable from the API endpoint: ${err.message}`, {
        cause: err,
        code: 'NodeUnreachable',
      });
    }
    throw err;
  }
}
