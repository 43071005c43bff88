// What the credentials Secret of a libvirt Provider holds, per transport of
// its endpoint. The keys are alternatives, not a list every Secret carries:
// `qemu+tls://` needs a client certificate, `qemu+ssh://` a key and the host
// key's fingerprint, `+tcp`/`+unix` nothing. So the descriptor's
// credentialKeys (all required, checked before any backend call) is empty and
// the transport's own keys are checked here, before dialling, with a message
// naming the missing keys.
import { BackendError, BackendErrorKind } from '../backend-error.js';
import type { Connection } from '../backend.js';
import type { LibvirtClientOptions } from './client/libvirt-client.js';
import { parseLibvirtUri, type Transport } from './client/uri.js';

/** The credentials Secret keys the libvirt backend reads. */
export const LibvirtCredentialKey = {
  /** Client certificate for `+tls` (a `kubernetes.io/tls` Secret's key). */
  TlsCert: 'tls.crt',
  TlsKey: 'tls.key',
  /** CA of the daemon's certificate, when the Provider has no caBundle of its own. */
  Ca: 'ca.crt',
  /** Private key for `+ssh` (a `kubernetes.io/ssh-auth` Secret's key). */
  SshPrivateKey: 'ssh-privatekey',
  /** `SHA256:…` of the host key `+ssh` must find (as `ssh-keygen -l` prints it). */
  SshHostKeyFingerprint: 'ssh-host-key-fingerprint',
} as const;

/** The Secret keys each transport needs; the CA of `+tls` may come from spec.connection.caBundle instead. */
export const REQUIRED_KEYS: Readonly<Record<Transport, readonly string[]>> = {
  tls: [LibvirtCredentialKey.TlsCert, LibvirtCredentialKey.TlsKey],
  ssh: [LibvirtCredentialKey.SshPrivateKey, LibvirtCredentialKey.SshHostKeyFingerprint],
  tcp: [],
  unix: [],
};

/**
 * The client options of a Provider's connection: its URI, and TLS or SSH
 * material from the Secret. Throws BackendError Unauthorized (the Provider
 * reports ConnectFailed) naming the keys its transport lacks, and TypeError
 * for an endpoint that is no libvirt URI.
 */
export function toClientOptions(connection: Connection, onCall?: LibvirtClientOptions['onCall']): LibvirtClientOptions {
  const uri = parseLibvirtUri(connection.endpoint);
  const credential = (key: string): string | undefined => (connection.credentials[key] ? connection.credentials[key] : undefined);
  const missing = REQUIRED_KEYS[uri.transport].filter((key) => credential(key) === undefined);
  const ca = connection.caPem ?? credential(LibvirtCredentialKey.Ca);
  if (uri.transport === 'tls' && ca === undefined) missing.push(`${LibvirtCredentialKey.Ca} (or spec.connection.caBundle)`);
  if (missing.length > 0) {
    throw new BackendError(
      BackendErrorKind.Unauthorized,
      `the credentials Secret lacks ${missing.join(', ')}: a ${uri.driver}+${uri.transport}:// endpoint needs ${uri.transport === 'tls' ? 'a client certificate, its key and the daemon’s CA' : 'a private key and the host key’s fingerprint'}`,
      { code: 'CredentialsIncomplete' },
    );
  }
  const cert = credential(LibvirtCredentialKey.TlsCert);
  const key = credential(LibvirtCredentialKey.TlsKey);
  const sshKey = credential(LibvirtCredentialKey.SshPrivateKey);
  const fingerprint = credential(LibvirtCredentialKey.SshHostKeyFingerprint);
  return {
    uri: connection.endpoint,
    ...(uri.transport === 'tls' && cert !== undefined && key !== undefined && ca !== undefined ? { tls: { certPem: cert, keyPem: key, caPem: ca } } : {}),
    ...(uri.transport === 'ssh' && sshKey !== undefined
      ? { ssh: { privateKeyPem: sshKey, ...(fingerprint === undefined ? {} : { hostKeyFingerprint: fingerprint.trim() }) } }
      : {}),
    ...(onCall ? { onCall } : {}),
  };
}
