// The vCenter sessions of one role (kit/session-pool.ts): one login per (endpoint,
// credentials, CA), logged out when the credentials rotate, when idle, and when the role
// stops. Refused credentials or a dead endpoint drop the session: the next pass logs in anew.
import { isConnectFailure } from '../backend-error.js';
import { SessionPool } from '../kit/session-pool.js';
import type { SoapTransportOptions } from './client/transport.js';
import { VsphereClient } from './client/vsphere-client.js';
import { BACKEND_USER_AGENT } from '../user-agent.js';

export interface VsphereSessionsOptions {
  /** Log out a session unused this long. @default 300000 (5 min; vCenter's own idle timeout is 30 min) */
  readonly idleMs?: number;
  /** Told of every SOAP call (metrics). */
  readonly onCall?: SoapTransportOptions['onCall'];
}

export function vsphereSessions(options: VsphereSessionsOptions = {}): SessionPool<VsphereClient> {
  return new SessionPool<VsphereClient>({
    open: (connection) =>
      VsphereClient.connect({
        endpoint: connection.endpoint,
        username: connection.credentials.username ?? '',
        password: connection.credentials.password ?? '',
        ...(connection.caPem ? { caPem: connection.caPem } : {}),
        insecureSkipTLSVerify: connection.insecureSkipTLSVerify,
        userAgent: BACKEND_USER_AGENT,
        ...(options.onCall ? { onCall: options.onCall } : {}),
      }),
    close: (client) => client.close(),
    identity: (connection) => `${connection.endpoint}\n${connection.credentials.username ?? ''}`,
    dropOn: isConnectFailure,
    ...(options.idleMs === undefined ? {} : { idleMs: options.idleMs }),
  });
}
