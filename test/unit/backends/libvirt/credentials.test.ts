// The keys a libvirt Provider's Secret must hold, per transport of its endpoint.
import { describe, expect, it } from 'vitest';
import { BackendErrorKind, isBackendError } from '../../../../controller/backends/backend-error.js';
import { toClientOptions } from '../../../../controller/backends/libvirt/credentials.js';

const connection = (endpoint: string, credentials: Record<string, string>, caPem?: string) => ({
  endpoint,
  credentials,
  insecureSkipTLSVerify: false,
  ...(caPem ? { caPem } : {}),
});

function refusal(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    if (isBackendError(err, BackendErrorKind.Unauthorized)) return err.message;
    throw err;
  }
  throw new Error('not refused');
}

describe('libvirt credentials', () => {
  it('takes the client certificate for tls, with the CA from caBundle or the Secret', () => {
    const options = toClientOptions(connection('qemu+tls://kvm01/system', { 'tls.crt': 'C', 'tls.key': 'K' }, 'CA'));
    expect(options.tls).toEqual({ certPem: 'C', keyPem: 'K', caPem: 'CA' });
    expect(options.ssh).toBeUndefined();
    expect(toClientOptions(connection('qemu+tls://kvm01/system', { 'tls.crt': 'C', 'tls.key': 'K', 'ca.crt': 'S' })).tls?.caPem).toBe('S');
  });

  it('takes the key and host key fingerprint for ssh', () => {
    const options = toClientOptions(connection('qemu+ssh://root@kvm01/system', { 'ssh-privatekey': 'P', 'ssh-host-key-fingerprint': 'SHA256:abc\n' }));
    expect(options.ssh).toEqual({ privateKeyPem: 'P', hostKeyFingerprint: 'SHA256:abc' });
    expect(options.tls).toBeUndefined();
  });

  it('needs nothing for tcp and unix', () => {
    expect(toClientOptions(connection('qemu+tcp://kvm01/system', {})).uri).toBe('qemu+tcp://kvm01/system');
    expect(toClientOptions(connection('qemu+unix:///system', {})).uri).toBe('qemu+unix:///system');
  });

  it.each([
    ['qemu+tls://kvm01/system', { 'tls.crt': 'C' }, 'lacks tls.key, ca.crt (or spec.connection.caBundle)'],
    ['qemu+ssh://kvm01/system', { 'ssh-privatekey': 'P' }, 'lacks ssh-host-key-fingerprint'],
    ['qemu+ssh://kvm01/system', { 'tls.crt': 'C', 'tls.key': 'K' }, 'lacks ssh-privatekey, ssh-host-key-fingerprint'],
  ])('refuses %s with %o, naming what is missing', (endpoint, credentials, missing) => {
    expect(refusal(() => toClientOptions(connection(endpoint, credentials)))).toContain(missing);
  });
});
