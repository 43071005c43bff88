// The vCenter client of one pass, from the role's session pool: rotated
// credentials and CA bundles apply at the next pass (they make a new session).
import type { Connection } from '../backend.js';
import type { VsphereClient } from './client/vsphere-client.js';
import { VsphereSessionPool } from './session-pool.js';

const sessions = new VsphereSessionPool();

export function withClient<T>(connection: Connection, use: (client: VsphereClient) => Promise<T>): Promise<T> {
  return sessions.use(connection, use);
}

/** Logs every pooled session out (role shutdown). */
export function closeSessions(): Promise<void> {
  return sessions.closeAll();
}
