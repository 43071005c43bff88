// The Proxmox clients of one role (kit/session-pool.ts): one per (endpoint, token, CA), so
// passes reuse kept-alive TLS connections instead of a handshake each. A token has no session
// to log in or out of: what the pool owns is the connections, closed when the secret rotates,
// when idle, and when the role stops. A refused token or a dead endpoint drops the client.
import { BackendError, BackendErrorKind, isConnectFailure } from '../backend-error.js';
import { SessionPool } from '../kit/session-pool.js';
import { ProxmoxCredentialKeys } from './client/credentials.js';
import { ProxmoxClient } from './client/proxmox-client.js';
import type { ProxmoxTransportOptions } from './client/transport.js';
import { BACKEND_USER_AGENT } from '../user-agent.js';

export interface ProxmoxClientsOptions {
  /** Close a client unused this long. @default 300000 (5 min) */
  readonly idleMs?: number;
  /** Told of every API call (metrics). */
  readonly onCall?: ProxmoxTransportOptions['onCall'];
}

/** A Secret without the token keys is BackendError Unauthorized (code CredentialsUnavailable) at its first use. */
export function proxmoxClients(options: ProxmoxClientsOptions = {}): SessionPool<ProxmoxClient> {
  return new SessionPool<ProxmoxClient>({
    open: (connection) => {
      const tokenID = connection.credentials[ProxmoxCredentialKeys.tokenID];
      const tokenSecret = connection.credentials[ProxmoxCredentialKeys.tokenSecret];
      if (!tokenID || !tokenSecret) {
        throw new BackendError(
          BackendErrorKind.Unauthorized,
          `credentials Secret needs ${ProxmoxCredentialKeys.tokenID} and ${ProxmoxCredentialKeys.tokenSecret}`,
          {
            code: 'CredentialsUnavailable',
          },
        );
      }
      return ProxmoxClient.create({
        endpoint: connection.endpoint,
        tokenID,
        tokenSecret,
        ...(connection.caPem ? { caPem: connection.caPem } : {}),
        insecureSkipTLSVerify: connection.insecureSkipTLSVerify,
        userAgent: BACKEND_USER_AGENT,
        ...(options.onCall ? { onCall: options.onCall } : {}),
      });
    },
    close: (client) => client.close(),
    identity: (connection) => `${connection.endpoint}\n${connection.credentials[ProxmoxCredentialKeys.tokenID] ?? ''}`,
    dropOn: isConnectFailure,
    ...(options.idleMs === undefined ? {} : { idleMs: options.idleMs }),
  });
}
