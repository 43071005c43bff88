// What the libvirt services (domains, pools, volumes, networks, host) call
// through: a procedure on the client's current connection.
import type { Procedure } from './procedures.js';
import type { RpcConnection } from './rpc-connection.js';

export interface RpcCaller {
  call<Args, Ret>(procedure: Procedure<Args, Ret>, args: Args): Promise<Ret>;
  /** The open connection, dialled first when there is none (streams use it directly). */
  connection(): Promise<RpcConnection>;
}
