// A throwaway CA and a serving certificate for 127.0.0.1 it signed, made with
// openssl (EC P-256: fast), for test peers served over TLS on loopback, so
// clients verify them with a CA bundle exactly as they would a real server.
// (test/peers/vsphere/vcsim.ts writes vcsim's the same way, into files.)
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const LOOPBACK = '127.0.0.1';

export interface ServingCertificate {
  /** PEM of the CA: what a client trusts. */
  readonly caPem: string;
  /** PEM of the server certificate (SAN IP:127.0.0.1) and its key. */
  readonly certPem: string;
  readonly keyPem: string;
}

export async function makeServingCertificate(commonName = 'banlieue-test-ca'): Promise<ServingCertificate> {
  const dir = await mkdtemp(join(tmpdir(), 'banlieue-ca-'));
  try {
    const file = (name: string): string => join(dir, name);
    const openssl = (...args: string[]): Promise<unknown> => run('openssl', args, { timeout: 30_000 });
    await openssl('ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', file('ca.key'));
    await openssl('req', '-x509', '-new', '-key', file('ca.key'), '-days', '2', '-subj', `/CN=${commonName}`, '-out', file('ca.crt'));
    await openssl('ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', file('server.key'));
    await openssl('req', '-new', '-key', file('server.key'), '-subj', `/CN=${LOOPBACK}`, '-out', file('server.csr'));
    await writeFile(file('server.ext'), `subjectAltName=IP:${LOOPBACK}\nextendedKeyUsage=serverAuth\n`);
    await openssl('x509', '-req', '-in', file('server.csr'), '-CA', file('ca.crt'), '-CAkey', file('ca.key'), '-CAcreateserial',
      '-days', '2', '-extfile', file('server.ext'), '-out', file('server.crt'));
    const [caPem, certPem, keyPem] = await Promise.all(['ca.crt', 'server.crt', 'server.key'].map((name) => readFile(file(name), 'utf8')));
    return { caPem: caPem ?? '', certPem: certPem ?? '', keyPem: keyPem ?? '' };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
