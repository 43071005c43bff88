// A throwaway PKI for test peers that speak TLS: one CA, then server
// certificates for a loopback address and client certificates, made with
// openssl (EC P-256: fast to make). Strict peers such as libvirtd (GnuTLS)
// check basic constraints and extended key usage, so both are set. Clients
// verify the peers with the CA exactly as they would a real server's.
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface IssuedCertificate {
  readonly certPem: string;
  readonly keyPem: string;
  readonly certFile: string;
  readonly keyFile: string;
}

export interface TestPki {
  readonly caPem: string;
  readonly caFile: string;
  /** A serving certificate whose SANs are `ip` (e.g. 127.0.0.1) and `moreIps`. */
  issueServer(name: string, ip: string, ...moreIps: string[]): Promise<IssuedCertificate>;
  /** A client certificate with CN `commonName`. */
  issueClient(name: string, commonName: string): Promise<IssuedCertificate>;
}

/** Makes a CA in `dir` (files `<name>.crt`/`.key` land there too). */
export async function createTestPki(dir: string, caName: string): Promise<TestPki> {
  const file = (name: string): string => join(dir, name);
  const openssl = (...args: string[]): Promise<unknown> => run('openssl', args, { timeout: 60_000 });
  await openssl('ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', file('ca.key'));
  await openssl(
    'req',
    '-x509',
    '-new',
    '-key',
    file('ca.key'),
    '-days',
    '2',
    '-subj',
    `/CN=${caName}`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
    '-out',
    file('ca.crt'),
  );

  async function issue(name: string, subject: string, extensions: string): Promise<IssuedCertificate> {
    await openssl('ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', file(`${name}.key`));
    await openssl('req', '-new', '-key', file(`${name}.key`), '-subj', subject, '-out', file(`${name}.csr`));
    writeFileSync(file(`${name}.ext`), `basicConstraints=critical,CA:FALSE\n${extensions}`);
    await openssl(
      'x509',
      '-req',
      '-in',
      file(`${name}.csr`),
      '-CA',
      file('ca.crt'),
      '-CAkey',
      file('ca.key'),
      '-CAcreateserial',
      '-days',
      '2',
      '-extfile',
      file(`${name}.ext`),
      '-out',
      file(`${name}.crt`),
    );
    return {
      certPem: readFileSync(file(`${name}.crt`), 'utf8'),
      keyPem: readFileSync(file(`${name}.key`), 'utf8'),
      certFile: file(`${name}.crt`),
      keyFile: file(`${name}.key`),
    };
  }

  return {
    caPem: readFileSync(file('ca.crt'), 'utf8'),
    caFile: file('ca.crt'),
    issueServer: (name, ip, ...moreIps) =>
      issue(name, `/CN=${ip}`, `subjectAltName=${[ip, ...moreIps].map((a) => `IP:${a}`).join(',')}\nextendedKeyUsage=serverAuth\n`),
    issueClient: (name, commonName) => issue(name, `/CN=${commonName}`, 'extendedKeyUsage=clientAuth\n'),
  };
}

const LOOPBACK = '127.0.0.1';

/** A CA and a serving certificate for 127.0.0.1, as files in `dir` (for peers that read them: vcsim, libvirtd). */
export async function makeServingFiles(dir: string, caName: string): Promise<{ caPem: string; certFile: string; keyFile: string }> {
  const pki = await createTestPki(dir, caName);
  const server = await pki.issueServer('server', LOOPBACK);
  return { caPem: pki.caPem, certFile: server.certFile, keyFile: server.keyFile };
}

/** A CA and a serving certificate for 127.0.0.1, as PEM only (for servers in this process). */
export async function makeServingCertificate(caName = 'banlieue-test-ca'): Promise<{ caPem: string; certPem: string; keyPem: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'banlieue-ca-'));
  try {
    const pki = await createTestPki(dir, caName);
    const { certPem, keyPem } = await pki.issueServer('server', LOOPBACK);
    return { caPem: pki.caPem, certPem, keyPem };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
