// VMImage Url sources on a Cloud Hypervisor host: the backend's image lookup
// (what the VMImage row says) against a real HTTPS server on loopback, whose CA
// the host trusts as a mirror's (urlImages.caFile). The first lookup starts the
// download and reads ImageDownloading; a later one finds the verified file in
// the image directory; a checksum that does not match leaves no file and says so.
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { ImageSource } from '../../../infra/api/banlieue.io/v1alpha1/vm-image.js';
import type { Backend, ImageResolution } from '../../../controller/backends/backend.js';
import { cloudHypervisorBackend } from '../../../controller/backends/cloud-hypervisor/ch-backend.js';
import { urlImageHost } from '../../support/cloud-hypervisor/url-image-host.js';
import { createTestPki } from '../../support/test-pki.js';
import { waitFor } from '../../support/wait.js';

const IMAGE = Buffer.alloc(3 * 1024 * 1024, 'banlieue image ');
const SHA256 = `sha256:${createHash('sha256').update(IMAGE).digest('hex')}`;
const connection = { endpoint: '', credentials: {}, insecureSkipTLSVerify: false };

describe('Cloud Hypervisor images from a URL', () => {
  let dir: string;
  let server: Server;
  let base: string;
  let backend: Backend;
  let provider: Provider;
  let caFile: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'bnlimg-'));
    mkdirSync(join(dir, 'pki'));
    const pki = await createTestPki(join(dir, 'pki'), 'banlieue-image-mirror-ca');
    caFile = pki.caFile;
    const { certPem, keyPem } = await pki.issueServer('mirror', '127.0.0.1');
    server = createServer({ cert: certPem, key: keyPem }, (req, res) => {
      if (req.url?.startsWith('/images/')) res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(IMAGE);
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    backend = newBackend();
    provider = urlImageHost(dir, { caFile }).provider;
  });

  afterAll(async () => {
    await backend.close();
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  /** A role's backend on a host with no VMM (none is started here). */
  const newBackend = (): Backend => cloudHypervisorBackend(urlImageHost(dir, { caFile }).config);
  const source = (path: string, checksum?: string): ImageSource => ({
    providerClass: 'cloud-hypervisor',
    kind: 'Url',
    ref: `${base}${path}`,
    ...(checksum ? { checksum } : {}),
  });
  const lookup = (s: ImageSource): Promise<ImageResolution> => backend.resolveImage(provider, connection, s);
  const images = (): string[] => readdirSync(join(dir, 'images'));

  it('downloads the image into the image directory and reads ImageDownloading until it is there, verified', async () => {
    const url = source('/images/jammy.raw', SHA256);
    expect(await lookup(url)).toMatchObject({ ready: false, reason: 'ImageDownloading' });
    const found = await waitFor(
      'the image row to be ready',
      async () => {
        const row = await lookup(url);
        return row.ready ? row : undefined;
      },
      60_000,
    );
    expect(found.resolvedRef).toMatch(new RegExp(`^${join(dir, 'images')}/url-[0-9a-f]{16}-jammy\\.raw$`));
    expect(readFileSync(found.resolvedRef ?? '').equals(IMAGE)).toBe(true);
    // Found again without a second download.
    expect(await lookup(url)).toEqual(found);
  });

  it('discards an image whose checksum does not match: ImageChecksumMismatch, no file left', async () => {
    const url = source('/images/tampered.raw', `sha256:${'0'.repeat(64)}`);
    expect(await lookup(url)).toMatchObject({ ready: false, reason: 'ImageDownloading' });
    const refused = await waitFor(
      'the mismatch to be reported',
      async () => {
        const row = await lookup(url);
        return row.reason === 'ImageChecksumMismatch' ? row : undefined;
      },
      60_000,
    );
    expect(refused.message).toContain(`has ${SHA256}, not spec.sources[].checksum sha256:${'0'.repeat(64)}`);
    // A stopping role ends its downloads; nothing partial is left behind.
    await backend.close();
    expect(images().filter((f) => f.includes('tampered'))).toEqual([]);
  });

  it('reports an HTTP error as LookupFailed', async () => {
    // The role restarted: the last one ended its downloads when it stopped.
    backend = newBackend();
    const url = source('/missing.raw', SHA256);
    await lookup(url);
    const failed = await waitFor(
      'the failure to be reported',
      async () => {
        const row = await lookup(url);
        return row.reason === 'LookupFailed' ? row : undefined;
      },
      60_000,
    );
    expect(failed.message).toMatch(/HTTP 404/);
  });
});
