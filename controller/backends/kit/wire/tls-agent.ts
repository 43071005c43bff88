// TLS toward a Provider's endpoint: verified against its CA bundle (checked to hold at least
// one valid certificate, so a wrong paste is said at once, not as every handshake failing),
// or against Node's default roots, or not at all when the Provider asks (insecureSkipTLSVerify).
import { Agent } from 'node:https';
import { createSecureContext } from 'node:tls';

export interface TlsOptions {
  /** PEM bundle of the CAs to trust instead of Node's default roots. @default Node's default roots */
  readonly caPem?: string;
  /** Skip certificate and host name checks (wins over `caPem`). @default false */
  readonly insecureSkipTLSVerify?: boolean;
}

/** Throws TypeError unless `caPem` holds PEM certificates Node can use. */
export function checkCaPem(caPem: string): void {
  if (!caPem.includes('-----BEGIN CERTIFICATE-----')) throw new TypeError('caPem holds no PEM certificate');
  try {
    createSecureContext({ ca: caPem });
  } catch (cause) {
    throw new TypeError(`caPem is not a valid PEM bundle: ${(cause as Error).message}`, { cause });
  }
}

/** A keep-alive agent verifying as `options` say; TypeError for a CA bundle that is not one. */
export function tlsAgent(options: TlsOptions): Agent {
  const insecure = options.insecureSkipTLSVerify ?? false;
  const ca = insecure ? undefined : options.caPem;
  if (ca !== undefined) checkCaPem(ca);
  return new Agent({ keepAlive: true, rejectUnauthorized: !insecure, ...(ca !== undefined ? { ca } : {}) });
}
